//! `memhc-synth plot`: the plots drawn again from records a real sweep saved with `--json`,
//! for the slice `--where` selects, and a one-line error with exit code 2 for every kind of bad
//! input.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{stderr, synth};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    common::scratch("replot", name)
}

/// `memhc-synth plot JSON --against repeat --out OUT` and then `extra`.
fn plot_repeat(json: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["plot", json, "--against", "repeat", "--out", out];
    args.extend(extra);
    synth(&args)
}

/// `plot_repeat` that must succeed; returns the text of the GFLOPS plot it wrote.
fn plotted_gflops(json: &str, out: &str, extra: &[&str]) -> Vec<String> {
    let o = plot_repeat(json, out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    texts(&Path::new(out).join("gflops-vs-repeat.svg"))
}

/// Runs a small sweep over two tensor sizes and two repeated rates, lru in two modes, and
/// returns its `--json` file.
fn saved_sweep(dir: &Path) -> PathBuf {
    let json = dir.join("sweep.json");
    let o = synth(&[
        "--vector-size",
        "4",
        "--vectors",
        "4",
        "--sweep",
        "tensor-size=4,8",
        "--sweep",
        "repeat=0,1",
        "--policy",
        "lru",
        "--mode",
        "optimal,naive",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    json
}

/// The text elements of an SVG file.
fn texts(path: &Path) -> Vec<String> {
    let svg = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// Checks that `o` failed with exit code 2, printed nothing, and said one line holding
/// `needle`.
fn one_line_error(o: &Output, needle: &str) {
    common::one_line_error(o, 2, needle, "plot");
}

#[test]
fn a_saved_sweep_is_plotted_for_the_slice_where_selects() {
    let dir = scratch("slice");
    let json = saved_sweep(&dir);
    let out = dir.join("plots");
    let (json_s, out_s) = (json.to_str().unwrap(), out.to_str().unwrap());

    // Two tensor sizes share each series' x values: refused, with the --where to add.
    let o = plot_repeat(json_s, out_s, &[]);
    one_line_error(&o, "--where tensor-size=VALUE");
    assert!(!out.exists(), "a refused plot wrote files");

    let o = plot_repeat(json_s, out_s, &["--where", "tensor-size=8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let written: Vec<PathBuf> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    let stems: Vec<_> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        stems,
        [
            "gflops-vs-repeat.svg",
            "evictions-vs-repeat.svg",
            "misses-vs-repeat.svg"
        ]
    );
    let gflops = texts(&written[0]);
    assert!(
        gflops
            .iter()
            .any(|t| t.starts_with("GFLOPS against repeat (N=8")),
        "{gflops:?}"
    );
    for series in ["lru/optimal", "lru/naive"] {
        assert!(gflops.iter().any(|t| t == series), "{series}: {gflops:?}");
    }

    // A text filter narrows the series.
    let gflops = plotted_gflops(
        json_s,
        out_s,
        &["--where", "tensor-size=4", "--where", "mode=optimal"],
    );
    assert!(gflops.iter().any(|t| t.contains("(N=4")), "{gflops:?}");
    assert!(gflops.iter().any(|t| t == "lru/optimal"), "{gflops:?}");
    assert!(!gflops.iter().any(|t| t == "lru/naive"), "{gflops:?}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let dir = scratch("bad");
    let json = saved_sweep(&dir);
    let not_json = dir.join("notes.txt");
    fs::write(&not_json, "not records").unwrap();
    let out = dir.join("plots");
    let (json_s, out_s) = (json.to_str().unwrap(), out.to_str().unwrap());
    let missing = dir.join("missing.json");

    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["plot", missing.to_str().unwrap(), "--against", "repeat"],
            "missing.json",
        ),
        (
            vec!["plot", not_json.to_str().unwrap(), "--against", "repeat"],
            "not the records of memhc-synth --json",
        ),
        (
            vec!["plot", json_s, "--against", "colour"],
            "invalid value 'colour' for '--against",
        ),
        (
            vec!["plot", json_s, "--against", "repeat", "--where", "N=8"],
            "--where N=8: expected KEY=VALUE",
        ),
        (
            vec![
                "plot",
                json_s,
                "--against",
                "repeat",
                "--where",
                "repeat=all",
            ],
            "is not a finite number",
        ),
        (
            vec![
                "plot",
                json_s,
                "--against",
                "repeat",
                "--where",
                "tensor-size=5",
            ],
            "no record is left to plot after --where tensor-size=5",
        ),
    ];
    for (mut args, needle) in cases {
        args.extend(["--out", out_s]);
        one_line_error(&synth(&args), needle);
    }
    assert!(!out.exists(), "a refused plot wrote files");
    fs::remove_dir_all(&dir).unwrap();
}

/// Writes `records` as a JSON file in `dir`.
fn write_records(dir: &Path, name: &str, records: &[serde_json::Value]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, serde_json::to_string(records).unwrap()).unwrap();
    path
}

fn read_records(path: &Path) -> Vec<serde_json::Value> {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn records_told_apart_by_any_field_name_it_and_where_selects_them() {
    let dir = scratch("fields");
    let out = dir.join("plots");
    let out_s = out.to_str().unwrap();
    let saved = read_records(&saved_sweep(&dir));

    // The same sweep twice, once as if on another backend: told apart by the backend alone.
    let mut two: Vec<serde_json::Value> = saved.clone();
    two.extend(saved.iter().cloned().map(|mut r| {
        r["backend"] = "cuda".into();
        r
    }));
    let mixed = write_records(&dir, "two-backends.json", &two);
    let mixed_s = mixed.to_str().unwrap();
    let o = plot_repeat(mixed_s, out_s, &["--where", "tensor-size=4"]);
    one_line_error(
        &o,
        "(backend host and cuda): choose one with --where backend=VALUE",
    );
    let title = plotted_gflops(
        mixed_s,
        out_s,
        &["--where", "tensor-size=4", "--where", "backend=cuda"],
    );
    assert!(
        title.iter().any(|t| t.ends_with("cuda backend)")),
        "{title:?}"
    );

    // Exactly the same records twice: nothing tells them apart.
    let mut twice = saved.clone();
    twice.extend(saved.iter().cloned());
    let doubled = write_records(&dir, "twice.json", &twice);
    let o = plot_repeat(
        doubled.to_str().unwrap(),
        out_s,
        &["--where", "tensor-size=4"],
    );
    one_line_error(&o, "that no field tells apart");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_given_a_budget_in_bytes_are_selected_with_oversub_none() {
    let dir = scratch("budget");
    let out = dir.join("plots");
    let out_s = out.to_str().unwrap();
    let run = |extra: &[&str], name: &str| {
        let json = dir.join(name);
        let mut args = vec![
            "--tensor-size",
            "4",
            "--vector-size",
            "4",
            "--vectors",
            "4",
            "--sweep",
            "repeat=0,1",
            "--policy",
            "lru",
            "--mode",
            "optimal",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = synth(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        read_records(&json)
    };
    let mut records = run(&["--budget", "60000"], "budget.json");
    assert!(records.iter().all(|r| r["oversub"].is_null()));
    records.extend(run(&["--oversub", "0.5"], "oversub.json"));
    let mixed = write_records(&dir, "mixed.json", &records);
    let mixed_s = mixed.to_str().unwrap();

    let o = plot_repeat(mixed_s, out_s, &[]);
    one_line_error(
        &o,
        "(oversub none and 0.5): choose one with --where oversub=VALUE",
    );
    let o = synth(&["plot", mixed_s, "--against", "oversub", "--out", out_s]);
    one_line_error(&o, "--against oversub: 2 of the records have no oversub");

    plotted_gflops(mixed_s, out_s, &["--where", "oversub=none"]);
    let title = plotted_gflops(mixed_s, out_s, &["--where", "oversub=0.5"]);
    assert!(title.iter().any(|t| t.contains("oversub 0.5")), "{title:?}");
    fs::remove_dir_all(&dir).unwrap();
}
