//! The worked example of `docs/correlator-format.md`, read from the document itself, against
//! the numbers the document gives (computed outside the project: a few lines of Python with
//! integer SplitMix64 and plain complex loops).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use hadron::Engine;
use memhc_core::{Config, Mode, Runtime};
use memhc_corr::{PlanOptions, parse, plan, reference, run};
use memhc_host::HostBackend;
use num_complex::Complex64;

fn example() -> String {
    json_after("## Example")
}

/// The first JSON block after `heading` in the format document.
fn json_after(heading: &str) -> String {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/correlator-format.md"),
    )
    .unwrap();
    let start = doc.find(heading).unwrap();
    let body = &doc[start..];
    let open = body.find("```json\n").unwrap() + "```json\n".len();
    let close = body[open..].find("```").unwrap();
    body[open..open + close].to_owned()
}

#[test]
fn the_documented_example_has_the_documented_value() {
    let checked = parse(&example(), "example.json", std::path::Path::new(".")).unwrap();
    let want = Complex64::new(1.799883872368158, 5.709077811681285);
    let r = reference::correlators(&checked).unwrap();
    let got = r.correlators[0].values[0].complex();
    assert!((got - want).norm() < 1e-14 * want.norm(), "{got}");
    let p = plan(&checked, &PlanOptions::default()).unwrap();
    let rt = Runtime::new(HostBackend::new(1 << 20), Config::for_mode(Mode::Optimal)).unwrap();
    let mut engine = Engine::new(rt);
    let c = run(&p, &mut engine, &mut |_| {}).unwrap();
    let got = c.correlators[0].values[0].complex();
    assert!((got - want).norm() < 1e-14 * want.norm(), "{got}");
    assert_eq!(
        (
            c.correlators[0].values[0].source,
            c.correlators[0].values[0].sink
        ),
        (0, 3)
    );
    assert_eq!(c.correlators[0].keys["irrep"], "A1");
}

#[test]
fn the_documented_baryon_example_has_the_documented_value() {
    let checked = parse(
        &json_after("### A baryon loop"),
        "baryon.json",
        std::path::Path::new("."),
    )
    .unwrap();
    let want = Complex64::new(-6.0960517658892055, 11.716999875584083);
    let first = checked.nodes[0].values().unwrap().as_slice()[0];
    assert_eq!(
        first,
        Complex64::new(-0.22034050321745702, -0.9664234109436878)
    );
    let r = reference::correlators(&checked).unwrap();
    let got = r.correlators[0].values[0].complex();
    assert!((got - want).norm() < 1e-14 * want.norm(), "{got}");
    let p = plan(&checked, &PlanOptions::default()).unwrap();
    let rt = Runtime::new(HostBackend::new(1 << 20), Config::for_mode(Mode::Optimal)).unwrap();
    let mut engine = Engine::new(rt);
    let c = run(&p, &mut engine, &mut |_| {}).unwrap();
    let got = c.correlators[0].values[0].complex();
    assert!((got - want).norm() < 1e-14 * want.norm(), "{got}");
    // The other views give the other documented number.
    let mut file = checked.file.clone();
    file.graphs[0].loops[0].views = Some(vec![2, 1]);
    file.correlators[0].times[0].graphs = vec!["pq".into()];
    let other = memhc_corr::CheckedFile::new(file, std::path::Path::new(".")).unwrap();
    let got = reference::correlators(&other).unwrap().correlators[0].values[0].complex();
    let want = Complex64::new(9.54311588479968, 6.747852660054214);
    assert!((got - want).norm() < 1e-14 * want.norm(), "{got}");
}
