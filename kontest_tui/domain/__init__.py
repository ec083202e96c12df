"""The bottom layer: the records every step passes on (relations, queries, conversations,
responses, verdicts) and the parsing of a reply into yes / no / invalid."""
