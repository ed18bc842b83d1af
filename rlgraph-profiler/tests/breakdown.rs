//! Attribution and overlap against hand-worked interval sets, a synthetic workload of known
//! lengths on a virtual clock, and overhead correction with a known per-event cost.

use std::sync::Arc;

use rlgraph_profiler::{Breakdown, Calibration, CalibrationRun, Category, Clock, Event, Kind, Level, Name, Profiler};

fn event(kind: Kind, name: &str, thread: u32, start: u64, end: u64) -> Event {
    Event {
        kind,
        name: Name::Shared(Arc::from(name)),
        detail: None,
        method: None,
        thread,
        start,
        end,
    }
}

fn row<'a>(b: &'a Breakdown, phase: &str, op: &str) -> &'a rlgraph_profiler::Row {
    b.rows
        .iter()
        .find(|r| r.phase == phase && r.operation == op)
        .unwrap_or_else(|| panic!("no row ({phase}, {op}) in {:?}", b.rows))
}

fn ns(r: &rlgraph_profiler::Row, c: Category) -> f64 {
    r.nanos.get(&c).copied().unwrap_or(0.0)
}

#[test]
fn overlapping_scopes_count_once_by_the_innermost_and_gpu_first() {
    use Category::*;
    let cap = Kind::Capture;
    let events = vec![
        event(Kind::Phase, "P", 0, 0, 100),
        event(Kind::Operation, "A", 0, 10, 60),
        event(cap(Backend), "step", 0, 20, 40),
        event(cap(Transfer), "upload", 0, 30, 35),
        event(cap(Gpu), "kernel", 0, 35, 50),
        event(Kind::Operation, "B", 0, 60, 90),
        event(cap(Simulator), "env.step", 0, 70, 80),
        // Another thread: its time is its own, even where it overlaps thread 0's.
        event(Kind::Operation, "A", 1, 0, 50),
        event(cap(Backend), "step", 1, 0, 50),
    ];
    let b = Breakdown::from_events(&events);
    // Worked by hand, stretch by stretch:
    // A on thread 0: [10,20) framework, [20,30) backend, [30,35) transfer inside the
    // backend step, [35,50) GPU (over the backend step's end and framework), [50,60) framework.
    let a = row(&b, "P", "A");
    assert_eq!(
        [
            ns(a, Framework),
            ns(a, Backend),
            ns(a, Transfer),
            ns(a, Gpu),
            ns(a, Simulator)
        ],
        [20.0, 10.0, 5.0, 15.0, 0.0]
    );
    assert_eq!(a.total(), 50.0, "the operation's length, overlaps counted once");
    // B: [60,70) and [80,90) framework, [70,80) simulator.
    let bb = row(&b, "P", "B");
    assert_eq!((ns(bb, Framework), ns(bb, Simulator)), (20.0, 10.0));
    // The phase outside its operations: [0,10) and [90,100).
    assert_eq!(row(&b, "P", "(none)").total(), 20.0);
    assert_eq!(ns(row(&b, "(none)", "A"), Backend), 50.0);
    assert_eq!(b.total(), 150.0);
    assert_eq!((b.annotation_events, b.capture_events), (4, 5));
    let by_op = b.by_operation();
    assert_eq!(by_op["A"][&Backend], 60.0);
}

#[test]
fn nested_operations_give_the_inner_one_its_time() {
    let events = vec![
        event(Kind::Operation, "outer", 0, 0, 100),
        event(Kind::Operation, "inner", 0, 20, 30),
        // Two scopes starting together: the shorter is the inner one.
        event(Kind::Operation, "first", 0, 40, 70),
        event(Kind::Operation, "nested", 0, 40, 50),
    ];
    let b = Breakdown::from_events(&events);
    assert_eq!(row(&b, "(none)", "outer").total(), 100.0 - 10.0 - 30.0);
    assert_eq!(row(&b, "(none)", "inner").total(), 10.0);
    assert_eq!(row(&b, "(none)", "first").total(), 20.0);
    assert_eq!(row(&b, "(none)", "nested").total(), 10.0);
}

/// One training iteration of set lengths: 100 ns of framework work, an inference of 300
/// (50 framework, 200 backend, 50 upload), a simulation of 400 (env step), a
/// backpropagation of 1000 (100 framework, 900 backend with a 100-long upload inside).
fn iteration(p: &Profiler) {
    let c = p.clock();
    let _phase = p.phase("training");
    c.advance(100);
    {
        let _op = p.operation("inference");
        c.advance(50);
        let step = p.capture(Category::Backend, "policy/dense");
        c.advance(200);
        drop(step);
        let up = p.capture(Category::Transfer, "upload");
        c.advance(50);
        drop(up);
    }
    {
        let _op = p.operation("simulation");
        let _env = p.capture(Category::Simulator, "env.step");
        c.advance(400);
    }
    {
        let _op = p.operation("backpropagation");
        c.advance(100);
        let _step = p.capture(Category::Backend, "loss/step");
        c.advance(400);
        let up = p.capture(Category::Transfer, "upload");
        c.advance(100);
        drop(up);
        c.advance(400);
    }
}

#[test]
fn a_synthetic_workload_of_known_lengths_is_attributed_exactly() {
    let p = Profiler::new(Clock::virtual_with_cost(0), Level::Full);
    for _ in 0..10 {
        iteration(&p);
    }
    let b = Breakdown::from_events(&p.take_events());
    use Category::*;
    let inference = row(&b, "training", "inference");
    assert_eq!(
        [
            ns(inference, Framework),
            ns(inference, Backend),
            ns(inference, Transfer)
        ],
        [500.0, 2000.0, 500.0]
    );
    let sim = row(&b, "training", "simulation");
    assert_eq!((ns(sim, Simulator), sim.total()), (4000.0, 4000.0));
    let bp = row(&b, "training", "backpropagation");
    assert_eq!(
        [ns(bp, Framework), ns(bp, Backend), ns(bp, Transfer)],
        [1000.0, 8000.0, 1000.0]
    );
    assert_eq!(row(&b, "training", "(none)").total(), 1000.0);
    assert_eq!(b.total(), 18000.0);
}

fn timed_run(level: Level, per_event: u64, iterations: usize) -> (CalibrationRun, Breakdown) {
    let p = Profiler::new(Clock::virtual_with_cost(per_event), level);
    for _ in 0..iterations {
        iteration(&p);
    }
    let wall = p.clock().now() as f64;
    let b = Breakdown::from_events(&p.take_events());
    let run = CalibrationRun {
        wall_ns: wall,
        annotation_events: b.annotation_events,
        capture_events: b.capture_events,
    };
    (run, b)
}

#[test]
fn calibration_recovers_a_known_per_event_cost_and_correction_removes_it() {
    // Each recorded event costs 37 virtual ns, as bookkeeping would.
    let (off, _) = timed_run(Level::Off, 37, 20);
    let (ann, _) = timed_run(Level::Annotations, 37, 20);
    let (full, _) = timed_run(Level::Full, 37, 20);
    assert_eq!(off.wall_ns, 20.0 * 1800.0, "no events, no cost");
    assert_eq!((ann.annotation_events, full.capture_events), (20 * 4, 20 * 5));
    let cal = Calibration::derive(off, ann, full);
    assert!(
        (cal.annotation_ns - 37.0).abs() < 1e-9 && (cal.capture_ns - 37.0).abs() < 1e-9,
        "{cal:?}"
    );

    // Another run length: the corrected total equals the unprofiled time, and each row's
    // framework time equals the set lengths again.
    let (profiled, b) = timed_run(Level::Full, 37, 7);
    let (plain, _) = timed_run(Level::Off, 37, 7);
    assert!(profiled.wall_ns > plain.wall_ns);
    let corrected_wall = profiled.wall_ns - cal.overhead(profiled.annotation_events, profiled.capture_events);
    assert!((corrected_wall - plain.wall_ns).abs() < 1e-6);
    let fixed = b.corrected(&cal);
    assert!(
        (fixed.total() - 7.0 * 1800.0).abs() < 1e-6,
        "{} vs {}: {:?}",
        fixed.total(),
        7.0 * 1800.0,
        b.rows
    );
    let inference = row(&fixed, "training", "inference");
    assert!(
        (ns(inference, Category::Framework) - 7.0 * 50.0).abs() < 1e-6,
        "{}",
        fixed.table()
    );
    let bp = row(&fixed, "training", "backpropagation");
    assert!(
        (ns(bp, Category::Framework) - 7.0 * 100.0).abs() < 1e-6,
        "{}",
        fixed.table()
    );
}

#[test]
fn when_off_nothing_is_recorded_and_levels_gate_scopes() {
    let p = Profiler::new(Clock::virtual_with_cost(0), Level::Off);
    iteration(&p);
    assert!(p.take_events().is_empty());
    p.set_level(Level::Annotations);
    iteration(&p);
    let events = p.take_events();
    assert_eq!(events.len(), 4);
    assert!(events.iter().all(|e| !matches!(e.kind, Kind::Capture(_))));
}

#[test]
fn the_chrome_trace_has_one_complete_event_per_scope_in_microseconds() {
    let p = Profiler::new(Clock::virtual_with_cost(0), Level::Full);
    iteration(&p);
    let events = p.take_events();
    let trace = rlgraph_profiler::chrome_trace(&events);
    let list = trace["traceEvents"].as_array().unwrap();
    assert_eq!(list.len(), 9);
    let step = list.iter().find(|e| e["name"] == "loss/step").unwrap();
    // backpropagation starts at 100 + 300 + 400 = 800 ns, its step 100 ns later, 900 long.
    assert_eq!(
        (step["ph"].as_str(), step["ts"].as_f64(), step["dur"].as_f64()),
        (Some("X"), Some(0.9), Some(0.9))
    );
    assert_eq!(step["cat"], "backend");
}

#[test]
fn the_chart_is_an_svg_with_a_bar_per_operation() {
    let p = Profiler::new(Clock::virtual_with_cost(0), Level::Full);
    iteration(&p);
    let b = Breakdown::from_events(&p.take_events());
    let path = std::env::temp_dir().join(format!("rlgraph-profiler-chart-{}.svg", std::process::id()));
    rlgraph_profiler::chart::stacked_bars(&b.by_operation(), "test", &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(svg.starts_with("<svg"));
    for op in ["inference", "simulation", "backpropagation"] {
        assert!(svg.contains(op), "{op}");
    }
}
