"""The 5-way similarity task type (Parasol's first): `tasktype.Similarity`, its worked examples in `guidelines`.

The scale's facts (answers, binary and ordinal mappings, declared as the type's `Vote`) are in
`scale`, free of Django. Nothing is imported here, so Django-free code can import a submodule
without loading Django.
"""
