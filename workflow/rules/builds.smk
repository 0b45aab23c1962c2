# The builds every run needs: the guest image, a kernel per variant and the
# backend's own build (the plugin the spec names).  Each is tracked by the file that marks it
# complete in hotline's cache, in a directory named by the build's key, so
# that changed inputs are a build that is missing.

KERNELS = str(Path(next(iter(sweep.kernels.values()))).parent.parent)
IMAGES = str(Path(sweep.image).parent.parent)


rule build_kernel:
    output: f"{KERNELS}/{{variant}}-{{key}}/kernel.json"
    params:
        step=STEP,
        source=SOURCE,
    log: build_log_path("kernel", "{variant}-{key}")
    # Every core: Snakemake gives a local build at most --cores; the Slurm
    # profile sets a cluster's cores, memory and time.
    threads: usable_cores()
    shell: "{params.step} kernel {wildcards.variant:q} --jobs {threads} --expect {output:q} {params.source} > {log:q} 2>&1"


rule build_image:
    output: f"{IMAGES}/{{key}}/image.json"
    params:
        step=STEP,
    log: build_log_path("image", "{key}")
    shell: "{params.step} image --expect {output:q} > {log:q} 2>&1"


# The backend's own build its runs load (QEMU: the plugin), one a sweep:
# the step asks the spec's backend for it.
if sweep.tool:
    rule build_tool:
        output: sweep.tool
        params:
            step=STEP,
            spec=SPEC,
        log: build_log_path(sweep.tool_label.split()[0], Path(sweep.tool).parent.name)
        shell: "{params.step} tool {params.spec:q} --expect {output:q} > {log:q} 2>&1"
