// Every error path of include/memhc.hpp throws memhc::error with the status <memhc.h>
// documents for it (and a message), and nothing leaks or crashes (CI runs this under
// valgrind). Run from the repository root; exit code 0 when every case throws as documented.
//
// Not reachable through memhc.hpp by a caller, so not tested here: MEMHC_STATUS_NULL_POINTER
// (the layer never passes a null pointer where a value is needed), MEMHC_STATUS_BUFFER_TOO_SMALL
// (names and shapes are sized by the layer), MEMHC_STATUS_AUDIT_FAILED and
// MEMHC_STATUS_INTERNAL (bugs in memhc), MEMHC_STATUS_DEVICE (a failing GPU), and
// MEMHC_STATUS_UNINITIALIZED (a failed contraction returns no node to read).
#include <memhc.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

int failures = 0, cases = 0;

// Runs `f`, which must throw memhc::error with status `want` and a non-empty message.
void expect(const char* what, memhc_status want, const std::function<void()>& f) {
  ++cases;
  try {
    f();
  } catch (const memhc::error& e) {
    const std::string w = e.what();
    const bool ok = e.status() == want && !e.message().empty() &&
                    w == std::string(memhc_status_name(want)) + ": " + e.message() &&
                    std::string(e.status_name()) == memhc_status_name(want);
    std::printf("%-44s %s: %s\n", what, ok ? "ok" : "WRONG", e.what());
    if (!ok) ++failures;
    return;
  } catch (const std::exception& e) {
    std::printf("%-44s WRONG: another exception: %s\n", what, e.what());
    ++failures;
    return;
  }
  std::printf("%-44s WRONG: nothing thrown (want %s)\n", what, memhc_status_name(want));
  ++failures;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

int main() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string tmp = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/memhc-errors-";
  const std::string pion = "examples/data/pion.corr.json";

  // Creating a runtime.
  expect("unknown backend", MEMHC_STATUS_UNKNOWN_NAME, [] {
    memhc::config c;
    c.backend = "tpu";
    memhc::runtime rt(c);
  });
  expect("unknown policy", MEMHC_STATUS_UNKNOWN_NAME, [] {
    memhc::config c;
    c.policy = "fifo";
    memhc::runtime rt(c);
  });
  expect("unknown mode", MEMHC_STATUS_UNKNOWN_NAME, [] {
    memhc::config c;
    c.mode = "fast";
    memhc::runtime rt(c);
  });
  {
    // A GPU backend on a machine without one: MEMHC_STATUS_UNAVAILABLE (on a GPU machine the
    // runtime opens, and that is not an error).
    ++cases;
    memhc::config c;
    c.backend = "cuda";
    try {
      memhc::runtime rt(c);
      std::printf("%-44s ok: opened (a GPU is present)\n", "cuda backend");
    } catch (const memhc::error& e) {
      const bool ok = e.status() == MEMHC_STATUS_UNAVAILABLE;
      std::printf("%-44s %s: %s\n", "cuda backend", ok ? "ok" : "WRONG", e.what());
      if (!ok) ++failures;
    }
  }

  memhc::config cfg;
  cfg.budget_bytes = 1 << 20;  // 1 MiB: room for two 16 x 8 x 8 nodes, not for 16 x 64 x 64
  memhc::runtime rt(cfg);
  const std::vector<memhc::complex> x(16 * 8 * 8, memhc::complex(1, 0));
  memhc::node a = rt.register_node(16, {8, 8}, x);
  memhc::plan meson = rt.meson4x4();

  // Registering.
  expect("register: data of the wrong length", MEMHC_STATUS_SIZE_MISMATCH,
         [&] { rt.register_node(16, {8, 7}, x); });
  expect("register: no dimensions", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.register_node(16, memhc::span<const std::size_t>(), x); });
  expect("register: a zero dimension", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.register_node(16, {0, 8}, memhc::span<const memhc::complex>()); });

  // Plans.
  expect("plan: no terms", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.make_plan(memhc::span<const memhc::term>()); });
  expect("plan: an output out of range", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.make_plan({{5, 0, 0}}, 2); });
  expect("plan: a term listed twice", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.make_plan({{0, 1, 2}, {0, 1, 2}}); });

  // Contractions.
  const std::vector<memhc::complex> y(16 * 8 * 4, memhc::complex(1, 0));
  memhc::node narrow = rt.register_node(16, {8, 4}, y);
  expect("contract: shapes that do not multiply", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.contract(narrow, narrow, meson); });
  expect("contract: a spin out of range", MEMHC_STATUS_INVALID_ARGUMENT, [&] {
    memhc::plan p = rt.make_plan({{0, 0, 16}});
    rt.contract(a, a, p);
  });
  expect("contract: a stream out of range", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.contract(a, a, meson, 99); });
  expect("contract: an empty node", MEMHC_STATUS_INVALID_HANDLE,
         [&] { rt.contract(memhc::node(), a, meson); });
  expect("contract: an empty plan", MEMHC_STATUS_INVALID_HANDLE,
         [&] { rt.contract(a, a, memhc::plan()); });
  expect("run_vector: a bad contraction", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.run_vector({{a, a, meson}, {narrow, narrow, meson}}); });
  {
    const std::vector<memhc::complex> big(16 * 64 * 64, memhc::complex(1, 0));
    memhc::node b = rt.register_node(16, {64, 64}, big);  // 1 MiB: registered on the host
    expect("contract: a working set over the budget", MEMHC_STATUS_DOES_NOT_FIT,
           [&] { rt.contract(b, b, meson); });
  }

  // Traces.
  expect("trace: no pairs", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.trace(a, a, memhc::span<const memhc::pair>()); });
  expect("trace: a pair twice", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.trace(a, a, {{1, 1}, {1, 1}}); });
  expect("trace: a spin out of range", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.trace(a, a, {{0, 16}}); });
  expect("trace_meson4x4: shapes that do not close", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { rt.trace_meson4x4(narrow, narrow); });

  // Reading, and handles that are no longer valid.
  expect("read: a view of the wrong size", MEMHC_STATUS_SIZE_MISMATCH, [&] {
    std::vector<memhc::complex> out(10);
    rt.read(a, out);
  });
  {
    memhc::node c = rt.contract(a, a, meson);
    const memhc_object stale = c.get();
    c.release();
    expect("release: twice", MEMHC_STATUS_INVALID_HANDLE, [&] { c.release(); });
    expect("read: a released node", MEMHC_STATUS_INVALID_HANDLE,
           [&] { rt.read(memhc::node(rt.get(), stale)); });
    expect("shape: a released node", MEMHC_STATUS_INVALID_HANDLE,
           [&] { rt.shape(memhc::node(rt.get(), stale)); });
  }
  {
    memhc::runtime other;
    memhc::node foreign = other.register_node(16, {8, 8}, x);
    expect("contract: a node of another runtime", MEMHC_STATUS_INVALID_HANDLE,
           [&] { rt.contract(foreign, a, meson); });
    other.destroy();
    expect("destroy: twice", MEMHC_STATUS_INVALID_HANDLE, [&] { other.destroy(); });
    expect("release: a node of a destroyed runtime", MEMHC_STATUS_INVALID_HANDLE,
           [&] { foreign.release(); });
  }

  // Correlator files.
  expect("corr: a missing file", MEMHC_STATUS_IO,
         [&] { memhc::corr f(tmp + "missing/none.corr.json"); });
  spit(tmp + "bad.corr.json", "{\"format\": \"memhc-corr/1\", \"nodes\": [");
  expect("corr: a file that is not valid", MEMHC_STATUS_INVALID_FILE,
         [&] { memhc::corr f(tmp + "bad.corr.json"); });
  memhc::corr file(pion);
  memhc::corr_results res = file.run();
  expect("corr run: unknown backend", MEMHC_STATUS_UNKNOWN_NAME, [&] {
    memhc::config c;
    c.backend = "tpu";
    file.run(c);
  });
  expect("corr run: a budget too small", MEMHC_STATUS_DOES_NOT_FIT, [&] {
    memhc::config c;
    c.budget_bytes = 1024;
    file.run(c);
  });
  expect("results: a name not there", MEMHC_STATUS_NOT_FOUND, [&] { res.find("C_nope"); });
  expect("results: an index out of range", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { res.name(res.size()); });
  expect("results: views of the wrong size", MEMHC_STATUS_SIZE_MISMATCH, [&] {
    std::vector<memhc::corr_time> t(res.len(0) + 1);
    std::vector<memhc::complex> v(res.len(0) + 1);
    res.values(0, t, v);
  });
  expect("results: views of different sizes", MEMHC_STATUS_SIZE_MISMATCH, [&] {
    std::vector<memhc::corr_time> t(res.len(0));
    std::vector<memhc::complex> v(res.len(0) + 1);
    res.values(0, t, v);
  });
  expect("results: write, unknown extension", MEMHC_STATUS_INVALID_ARGUMENT,
         [&] { res.write(tmp + "out.txt"); });
  expect("results: write, no such directory", MEMHC_STATUS_IO,
         [&] { res.write(tmp + "missing/out.json"); });
  {
    // The same graphs and times with other node values: a run of it is not the reference of
    // pion.corr.json.
    std::string text = slurp(pion);
    const std::string from = "\"seed\": 11", to = "\"seed\": 21";
    text.replace(text.find(from), from.size(), to);
    spit(tmp + "other.corr.json", text);
    memhc::corr other(tmp + "other.corr.json");
    memhc::corr_results wrong = other.run();
    expect("verify: results of other data", MEMHC_STATUS_VERIFY_FAILED,
           [&] { file.verify(wrong); });
  }
  {
    memhc::corr_results moved = std::move(res);
    expect("results: a moved-from owner", MEMHC_STATUS_INVALID_HANDLE, [&] { res.size(); });
    moved.release();
    expect("results: release twice", MEMHC_STATUS_INVALID_HANDLE, [&] { moved.release(); });
  }
  file.release();
  expect("corr: use after release", MEMHC_STATUS_INVALID_HANDLE, [&] { file.report(); });

  std::remove((tmp + "bad.corr.json").c_str());
  std::remove((tmp + "other.corr.json").c_str());
  std::printf("%d cases, %d wrong: %s\n", cases, failures, failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}
