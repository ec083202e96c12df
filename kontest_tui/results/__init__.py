"""A stored session's results, read from the store: its evaluation, its stored report, the
answers an ensemble or a comparison needs, and the settings it was asked with.

The layer between the store and the session runs (`run/`): reports, comparisons and the
ensemble read results here without needing to run anything.
"""
