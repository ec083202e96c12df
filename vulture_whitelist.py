"""Names vulture (dead-code check in `make lint`) cannot see used: each is read by a library,
by a dataclass's field walk, or set for its side effect. pyproject.toml's [tool.vulture]
ignores the framework hooks by pattern (Textual's compose/on_*/action_*, http.server's do_*);
this file names the rest, one line each, with where it is. Add a line only with its reason."""

# ruff: noqa
# mypy: ignore-errors

_ = object()

# Set for the library that reads them.
_.n_ctx  # xllamacpp.CommonParams (kontest_tui/models/local.py)
_.n_parallel  # xllamacpp.CommonParams
_.verbosity  # xllamacpp.CommonParams
_.warmup  # xllamacpp.CommonParams
_.n_threads  # xllamacpp.CommonParams (cpuparams, cpuparams_batch)
_.row_factory  # sqlite3.Connection (kontest_tui/store/chunks.py)
_.virtual_size  # Textual ScrollView (kontest_tui/tui/widgets/paged_table.py)
_.show_root  # Textual Tree (kontest_tui/tui/widgets/relation_tree.py)
_.guide_depth  # Textual Tree
_._bindings_ready  # Textual Footer's own flag (kontest_tui/tui/widgets/key_footer.py)
_.cursor_blink  # Textual Input/TextArea (tests/support/tui.py)
_.external_attr  # zipfile.ZipInfo (scripts/build_wordnet.py)
_.compress_type  # zipfile.ZipInfo

# Called by a library.
_.map_wn  # NLTK's WordNetCorpusReader.__init__ calls it (kontest_tui/generate/wordnet_data.py)
_.format_commands  # click.Group's hook (kontest_tui/cli/lazy.py)
__getattr__  # a module's lazy names, PEP 562 (kontest_tui/report/__init__.py, mitigate/__init__.py)
register  # a command module's, called by name from the lazy table (kontest_tui/cli/__init__.py)
_.connect_tcp  # httpcore's network backend (kontest_tui/models/http_client.py)
_.bindings_changed  # Textual Footer's hook (kontest_tui/tui/widgets/key_footer.py)

# Dataclass fields read by name (getattr over a tuple of their names).
server_error  # the sim's fault profile (models/sim/profile.py; read by sim/model.py FAULTS)
dropped_stream
error_knowledge  # LogicTally's causes (probes/evaluate.py; read by LOGIC_COUNTS)
error_inference
error_both
error_unstated
premise_knowledge
premise_inference
premise_unclassified
CAUSES  # the answer oracle's causes, what its `cause` field holds (probes/answer_oracle.py)

# Keys of store rows (TypedDicts in kontest_tui/store/records.py): columns a row holds, read by
# key (row["..."]) or printed whole (kontest sessions --format json), never as attributes.
updated
options_json
stopped_length
stopped_timeout
conversation_key

# Parameters a signature must have.
exc  # __exit__(*exc) (kontest_tui/store/database.py), a handler's (tests/support)
case  # parametrized test cases only named in the id (tests/kg)
attrs  # html.parser's handle_starttag(tag, attrs) (tests/report/test_session_page.py)
DOMNode  # in a cast() string (kontest_tui/tui/workers.py)
cpu1  # unpacked beside the figures the benchmark prints (benchmarks/model_clients.py)

# logging.LogRecord fields cleared so no handler prints a traceback (kontest_tui/tui/web.py)
exc_text
stack_info

# TypedDict keys written and read as JSON strings ("key": value), never as names.
interval_method  # oracles/report_json.py RateJSON
tests_planned  # ReportJSON
pending_relations
answers_from_cache
relation_status
relations_compared_alone  # oracles/report_json.py FindingsJSON
relations_opposite_alone
relations_after_own_reply
relations_implied
implied_doubtful
ci95  # report/compare_json.py RateCellJSON
by_subset  # OverlapJSON
wall_s  # SessionTiming, TimingJSON
s_per_call
weighted_improvement_pct  # mitigate/ensemble_json.py CrossValidatedTotalJSON
majority_improvement_pct

# TypedDict keys read by their string (report.get("curation")).
curation  # ReportSections' curation evidence (oracles/report_json.py; report/evidence.py)
atomic_s  # SessionTiming, TimingJSON (KONTEST Table 14, report/compare_paper.py)
sequential_s
other_s
one_model_only  # OverlapTotalJSON (KONTEST Fig. 4's totals)
flip_causes  # kinds/variant.py VariantsSection
queries_with_flips
questions_with_errors  # kinds/annotation.py AnnotationSection
per_relation_type  # kinds/factcheck.py FactcheckSection

# The kinds' report sections (TypedDicts), named in `cast("...")` strings only.
_.VariantsSection  # kinds/variant.py
_.AnnotationSection  # kinds/annotation.py
_.FactcheckSection  # kinds/factcheck.py
_.LogicSection  # kinds/logic.py

# Objects named only by entry points (importlib.metadata loads them by their dotted name).
_.TAKEN  # tests/models/model_plugin_cases.py, in tests/models/test_model_plugins.py
_.NOT_A_PREFIX  # tests/models/model_plugin_cases.py, in tests/models/test_model_plugins.py
