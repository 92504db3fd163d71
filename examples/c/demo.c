/* The README's C example, compiled and run by .ci/run (keep the two equal). */

#include <memhc.h>
#include <stdio.h>

int main(void) {
    enum { N = 4, LEN = 16 * N * N };
    static memhc_complex x[LEN], out[LEN];
    for (int i = 0; i < LEN; i++) x[i].re = 1.0;
    size_t dims[2] = {N, N};
    memhc_config cfg = memhc_config_default();         /* host backend, 1 GiB, lru */
    cfg.policy = "belady";
    memhc_runtime rt;
    memhc_object a, c;
    memhc_plan p;
    memhc_complex t;
    if (memhc_runtime_create(&cfg, &rt) || memhc_register(rt, 16, dims, 2, x, LEN, &a)
        || memhc_plan_meson4x4(rt, &p)
        || memhc_contract(rt, &(memhc_contraction){a, a, p, 0, 0}, 0, &c)
        || memhc_read(rt, c, out, LEN) || memhc_trace_meson4x4(rt, c, a, 0, &t)) {
        fprintf(stderr, "memhc: %s\n", memhc_last_error());
        return 1;
    }
    printf("c[0] = %g, trace = %g\n", out[0].re, t.re);  /* 16 and 4096 */
    memhc_runtime_destroy(rt);                            /* releases a, c and p too */
    return 0;
}
