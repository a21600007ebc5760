"""What is derived from a compile: parsed and annotated stages, facts, verdicts.

    analysis.py     Artifact -> Analysis: every stage parsed, annotated and counted
    summary.py      derived facts: what it needs, whether it fits, whether it spills
    remarks.py      Triton's remarks as notes on the lines they name
    diff.py         two Analyses -> what changed between two configs
    passes/         the pass pipeline: run, read dumps, query, compare
    failure.py      a compile that failed inside Triton: the pass, the op, the Python line, what to try
    explain/        verdicts, the roofline and the check language

Imports core, triton_api, language, inputs and pipeline.
"""
