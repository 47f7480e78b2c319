"""Task types: what a judge is asked about a pair, and how the answers become results.

Each task type is one module here behind the registry (`registry.py`); a campaign
names its type in `Campaign.task_type`. The contract a type fulfils is the
`TaskType` base class in `base.py`; README.md explains how to add one.
"""
