"""The 5-way similarity task type (Parasol's first): `tasktype.Similarity`, its worked examples in `guidelines`.

The scale's facts (answers, binary and ordinal mappings, the majority rule) are the
project's shared vocabulary in `annotation.scale`. Nothing is imported here, so
Django-free code can import a submodule without loading Django.
"""
