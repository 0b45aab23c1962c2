# One step per run, and the gathering of them all.


# An attempt at a run: {record} is the run id, or RUN-ID.attemptN after a
# failure (src/hotline/records/done.py says which attempt is wanted).  The
# step runs again when a build it needs is newer than its record or the
# run's conditions changed (system spec, workload parameters, backend and
# its version, mode, root, kernel command line: `conditions`); its own key
# check then reuses an unchanged result.
#
# A simulation claims its threads as the resource host_cores too, which a
# local run caps at --cores (src/hotline/sweep/engine.py): Snakemake from
# 9.10 to at least 9.15, the version requirements.lock pins, frees a
# finished build's cores and resources twice, and ran three simulations on
# two cores (snakemake/snakemake#3913; 9.27.1 did not).  The builds claim
# no host_cores, so there is nothing of it to free twice.
rule simulate:
    input:
        # The spec names the run; editing its description or timeout_s
        # changes no result.
        spec=ancient(SPEC),
        builds=lambda wc: sweep.run(wc.record).needs,
    output: RECORD
    params:
        conditions=lambda wc: sweep.run(wc.record).conditions,
        step=STEP,
        source=SOURCE,
    log: STEP_LOG
    threads: lambda wc: sweep.run(wc.record).threads
    resources:
        host_cores=lambda wc, threads: threads,
        mem_mb=lambda wc: sweep.run(wc.record).mem_mb,
        runtime=lambda wc: sweep.run(wc.record).runtime,
    shell: "{params.step} run {input.spec:q} {wildcards.record:q} {params.source} > {log:q} 2>&1"


# The index of every run (runs.parquet) and each results table of them all,
# once every run has an outcome, ok or failed.
rule gather:
    input:
        spec=ancient(SPEC),
        records=[run.record for run in sweep.runs],
    output: INDEX
    params:
        step=STEP,
    log: GATHER_LOG
    shell: "{params.step} gather {input.spec:q} > {log:q} 2>&1"
