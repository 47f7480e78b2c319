"""PEM's multi-criteria task type: `tasktype.Criteria`, its facts in `scale` (Django-free), examples in `guidelines`.

Nothing is imported here: the pure analysis (`reports.analysis.criteria`) imports
`scale` without loading Django.
"""
