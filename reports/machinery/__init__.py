"""What makes a report fast and exact, behind one seam: the store, the digests and the worker processes.

The analysis (`reports.analysis`, plain functions over DataFrames) and the readers (`reports.frames`)
know none of it (import-linter checks): `reports.cache` hands `build_report` a runner
(`memory.Memory`) and the readers what it kept (`loading.report_frames`).

- `digests`: digests of values and of the code that computes them (`code_digest`);
- `store`: the Django cache (diskcache's backend) under keys derived from inputs and code;
- `memory`: the analysis's steps, each kept under its function, its arguments and the code;
- `loading`: the pairs, signature groups and score columns, kept under the data versions they read;
- `workers`: forked processes, for the `report` command only.
"""
