// A correlator file from C++ (include/memhc.hpp): load and plan examples/data/pion.corr.json,
// run it on the host backend (or the backend named by the second argument: cuda, rocm),
// print every correlator, and check it: every value against memhc's dense reference, and
// C_pi_pi(0, 2) = Tr(M0 M2) against this program's own evaluation from the file's seeded
// nodes (docs/correlator-format.md defines seeded values exactly: SplitMix64).
//
// Usage: corr [FILE [BACKEND]] (run from the repository root; FILE defaults to
// examples/data/pion.corr.json). Exit code 0 when everything agrees.
#include <memhc.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kN = 4, kD = 4 * kN;  // distillation size of pion.corr.json; big matrix size

// The 4N x 4N matrix M[4N-block a, b][i][j] = node[4a + b][i][j] of a seeded meson node.
std::vector<memhc::complex> seeded_meson(std::uint64_t seed) {
  std::uint64_t state = seed;
  auto uniform = [&state] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
  };
  std::vector<memhc::complex> m(kD * kD);
  for (int s = 0; s < 16; ++s)
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) {
        const double re = uniform(), im = uniform();
        m[((s / 4) * kN + i) * kD + (s % 4) * kN + j] = memhc::complex(re, im);
      }
  return m;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "examples/data/pion.corr.json";
  memhc::config cfg;                         // budget 0: the plan's peak on the host backend
  if (argc > 2) cfg.backend = argv[2];

  // README: the C++ correlator example.
  memhc::corr file(path);                    // load and plan
  const memhc::plan_report rep = file.report();
  std::printf("%llu contractions (%llu without sharing), peak %llu bytes\n",
              static_cast<unsigned long long>(rep.contractions),
              static_cast<unsigned long long>(rep.contractions_without_sharing),
              static_cast<unsigned long long>(rep.peak_bytes));
  memhc::corr_results res = file.run(cfg);
  for (std::size_t i = 0; i < res.size(); ++i) {
    const std::vector<memhc::corr_time> times = res.times(i);
    const std::vector<memhc::complex> values = res.values(i);
    for (std::size_t k = 0; k < times.size(); ++k)
      std::printf("%s(%u, %u) = %.16e %+.16ei\n", res.name(i).c_str(), times[k].source,
                  times[k].sink, values[k].real(), values[k].imag());
  }
  const double err = file.verify(res);      // throws MEMHC_STATUS_VERIFY_FAILED above 1e-12
  // README end.

  bool ok = err <= 1e-12;
  if (path == "examples/data/pion.corr.json") {
    // C_pi_pi at (0, 2) is the graph conn_02 alone: Tr(M(pi_t0) M(pi_t2)), seeds 11 and 12.
    const std::vector<memhc::complex> m0 = seeded_meson(11), m2 = seeded_meson(12);
    memhc::complex want = 0;
    for (int i = 0; i < kD; ++i)
      for (int k = 0; k < kD; ++k) want += m0[i * kD + k] * m2[k * kD + i];
    const std::size_t c = res.find("C_pi_pi");
    const memhc::complex got = res.values(c).at(0);
    const double e = std::abs(got - want) / std::abs(want);
    std::printf("C_pi_pi(0, 2) against plain loops: relative error %.3g\n", e);
    ok = ok && res.times(c).at(0).source == 0 && res.times(c).at(0).sink == 2 && e < 1e-12;
  }
  // The direct data path (the fast one on a GPU): node data in page-locked memory, copies
  // issued ahead of their use; the same correlators.
  memhc::config direct = cfg;
  direct.host_memory = "pinned";
  direct.prefetch = 12;
  const double direct_err = file.verify(file.run(direct));
  std::printf("direct data path: largest error against the reference %.3g\n", direct_err);
  ok = ok && direct_err <= 1e-12;
  std::printf("largest error against the reference %.3g: %s\n", err, ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
} catch (const memhc::error& e) {
  std::fprintf(stderr, "memhc: %s\n", e.what());
  return 1;
}
