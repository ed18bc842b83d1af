//! The report of a benchmark suite: a table of each row's result against its published one,
//! and per row two plots (greedy return against steps and against wall seconds, the mean over
//! seeds with their spread), as one self-contained HTML file and SVG files beside it.

use std::fmt::Write as _;

use crate::suite::{Measure, Row, Suite};

/// One evaluation round of a run: when, and the returns then.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    /// Training steps so far.
    pub step: u64,
    /// Wall seconds of training so far.
    pub seconds: f64,
    /// The mean training return of the last 100 episodes (of all, before the 100th; NaN
    /// before the first).
    pub train_return: f64,
    /// The greedy evaluation round's mean return.
    pub eval_return: f64,
}

/// What one run (a row and a seed) gave: its learning curve, or why it failed.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The seed.
    pub seed: u64,
    /// The steps it was given.
    pub steps: u64,
    /// The curve, or the run's error.
    pub outcome: Result<Vec<CurvePoint>, String>,
    /// The step a `--pause-at` stopped the run at, short of `steps` (its curve so far).
    pub paused_at: Option<u64>,
}

/// A row's numbers over its seeds, for the table.
#[derive(Clone, Debug, PartialEq)]
pub struct RowSummary {
    /// The row's name.
    pub name: String,
    /// Runs that finished, and runs in all.
    pub finished: (usize, usize),
    /// Runs paused short of their steps (counted in `finished` by their curves so far).
    pub paused: usize,
    /// The mean and sample standard deviation over seeds of the last evaluation's return.
    pub final_return: Option<(f64, f64)>,
    /// The same of the training return (last 100 episodes) at the last evaluation.
    pub final_training: Option<(f64, f64)>,
    /// Seeds whose return in the row's measure reached the threshold, with the mean steps and
    /// seconds they took.
    pub solved: Option<(usize, f64, f64)>,
    /// The final mean in the row's measure is at least the published mean minus one published
    /// standard deviation (`None` without a published result, or for runs cut short by a
    /// budget).
    pub matches: Option<bool>,
}

/// The mean and sample standard deviation (n - 1; 0 for one value) of `xs`.
fn mean_std(xs: &[f64]) -> (f64, f64) {
    let n = xs.len().max(1) as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

/// The curves of the runs that finished with at least one evaluation round.
fn curves(runs: &[RunResult]) -> Vec<&Vec<CurvePoint>> {
    runs.iter()
        .filter_map(|r| r.outcome.as_ref().ok())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The table's numbers for `row` from its runs; `comparable` when they ran the row's whole
/// budget (otherwise nothing is matched against the published result).
pub fn summarize(row: &Row, runs: &[RunResult], comparable: bool) -> RowSummary {
    let curves = curves(runs);
    let finals = |of: fn(&CurvePoint) -> f64| -> Option<(f64, f64)> {
        let xs: Vec<f64> = curves
            .iter()
            .filter_map(|c| c.last())
            .map(of)
            .filter(|x| !x.is_nan())
            .collect();
        (!xs.is_empty()).then(|| mean_std(&xs))
    };
    let greedy: fn(&CurvePoint) -> f64 = |p| p.eval_return;
    let training: fn(&CurvePoint) -> f64 = |p| p.train_return;
    let measured = match row.measure {
        Measure::Greedy => greedy,
        Measure::Training => training,
    };
    let (final_return, final_training) = (finals(greedy), finals(training));
    let solved = row.threshold.map(|t| {
        let hits: Vec<&CurvePoint> = curves
            .iter()
            .filter_map(|c| c.iter().find(|p| measured(p) >= t))
            .collect();
        let steps: Vec<f64> = hits.iter().map(|p| p.step as f64).collect();
        let seconds: Vec<f64> = hits.iter().map(|p| p.seconds).collect();
        (hits.len(), mean_std(&steps).0, mean_std(&seconds).0)
    });
    // A paused run's last round is not its final one.
    let paused = runs.iter().filter(|r| r.paused_at.is_some()).count();
    let comparable = comparable && paused == 0;
    let matches = match (&row.published, finals(measured), comparable) {
        (Some(p), Some((mean, _)), true) => Some(mean >= p.mean - p.std),
        _ => None,
    };
    RowSummary {
        name: row.name.clone(),
        finished: (curves.len(), runs.len()),
        paused,
        final_return,
        final_training,
        solved,
        matches,
    }
}

/// One plotted series: x values and, per x, the mean and the lowest and highest over seeds.
struct Band {
    x: Vec<f64>,
    mean: Vec<f64>,
    low: Vec<f64>,
    high: Vec<f64>,
}

/// The greedy return over seeds at each evaluation all finished runs share, against `x`
/// (steps, or the mean wall seconds over seeds at that round).
fn band(runs: &[RunResult], x: impl Fn(&[&CurvePoint]) -> f64) -> Band {
    let curves = curves(runs);
    let rounds = curves.iter().map(|c| c.len()).min().unwrap_or(0);
    let mut b = Band {
        x: vec![],
        mean: vec![],
        low: vec![],
        high: vec![],
    };
    for i in 0..rounds {
        let points: Vec<&CurvePoint> = curves.iter().map(|c| &c[i]).collect();
        let ys: Vec<f64> = points.iter().map(|p| p.eval_return).collect();
        b.x.push(x(&points));
        b.mean.push(mean_std(&ys).0);
        b.low.push(ys.iter().copied().fold(f64::INFINITY, f64::min));
        b.high.push(ys.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    }
    b
}

/// Round tick values covering `[lo, hi]`: about five, at 1, 2 or 5 times a power of ten.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * power);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A number as a tick label: short, no trailing zeros.
fn label(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// An SVG line plot of `b` (the mean as a line, the spread as a shaded area), with a dashed
/// line at `threshold`.
fn svg(title: &str, x_label: &str, b: &Band, threshold: Option<f64>) -> String {
    svg_of(title, x_label, "greedy return", b, threshold)
}

/// [`svg`] with the y axis labelled `y_label`.
fn svg_of(title: &str, x_label: &str, y_label: &str, b: &Band, threshold: Option<f64>) -> String {
    let (w, h, left, right, top, bottom) = (480.0, 300.0, 60.0, 15.0, 30.0, 45.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="13">{}</text>"#,
        w / 2.0,
        escape(title)
    );
    if b.x.is_empty() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">no finished run</text></svg>"#,
            w / 2.0,
            h / 2.0
        );
        return s;
    }
    let finite = |v: &&f64| v.is_finite();
    let (x0, x1) = (
        0.0f64.min(b.x[0]),
        b.x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let ys = b.low.iter().chain(&b.high).chain(threshold.as_ref());
    let y0 = ys.clone().filter(finite).copied().fold(f64::INFINITY, f64::min);
    let y1 = ys.filter(finite).copied().fold(f64::NEG_INFINITY, f64::max);
    let (y0, y1) = if y1 > y0 { (y0, y1) } else { (y0 - 1.0, y0 + 1.0) };
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom);
    for t in ticks(x0, x1) {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#ddd"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
            px(t),
            top,
            h - bottom,
            h - bottom + 14.0,
            label(t)
        );
    }
    for t in ticks(y0, y1) {
        let _ = write!(
            s,
            r##"<line x1="{0}" y1="{1:.1}" x2="{2}" y2="{1:.1}" stroke="#ddd"/><text x="{3}" y="{4:.1}" text-anchor="end">{5}</text>"##,
            left,
            py(t),
            w - right,
            left - 4.0,
            py(t) + 4.0,
            label(t)
        );
    }
    let points = |ys: &[f64]| -> Vec<String> {
        b.x.iter()
            .zip(ys)
            .filter(|(_, y)| y.is_finite())
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect()
    };
    let mut area = points(&b.high);
    area.extend(points(&b.low).into_iter().rev());
    let _ = write!(
        s,
        r##"<polygon points="{}" fill="#4a7bd0" fill-opacity="0.2" stroke="none"/>"##,
        area.join(" ")
    );
    let _ = write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#1f4e9c" stroke-width="2"/>"##,
        points(&b.mean).join(" ")
    );
    if let Some(t) = threshold {
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#c33" stroke-dasharray="5,4"/>"##,
            py(t),
            w - right
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate(14,{}) rotate(-90)" text-anchor="middle">{}</text></svg>"#,
        (left + w - right) / 2.0,
        h - 8.0,
        escape(x_label),
        (top + h - bottom) / 2.0,
        escape(y_label)
    );
    s
}

/// After each of a run's episodes, the mean of the last `window` returns (fewer at the
/// start), with the lowest and highest of them as the spread.
fn moving_band(returns: &[f64], window: usize) -> Band {
    let mut b = Band {
        x: vec![],
        mean: vec![],
        low: vec![],
        high: vec![],
    };
    for end in 1..=returns.len() {
        let recent = &returns[end.saturating_sub(window.max(1))..end];
        b.x.push(end as f64);
        b.mean.push(mean_std(recent).0);
        b.low.push(recent.iter().copied().fold(f64::INFINITY, f64::min));
        b.high.push(recent.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    }
    b
}

/// The training curve `rlgraph train --out` draws as `curve.svg`: the mean return of the last
/// `window` episodes after each episode, shaded between the lowest and highest of them.
pub fn episode_curve(title: &str, returns: &[f64], window: usize) -> String {
    let y_label = format!("mean return of the last {window} episodes");
    svg_of(title, "episodes", &y_label, &moving_band(returns, window), None)
}

/// `text` safe inside HTML and SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The two plots of a row: against steps and against wall seconds.
pub fn row_plots(row: &Row, runs: &[RunResult]) -> [String; 2] {
    let by_steps = band(runs, |p| p[0].step as f64);
    let by_seconds = band(runs, |p| mean_std(&p.iter().map(|q| q.seconds).collect::<Vec<_>>()).0);
    let title = format!("{} on {}", row.name, row.env);
    [
        svg(&title, "environment steps", &by_steps, row.threshold),
        svg(&title, "wall seconds (mean over seeds)", &by_seconds, row.threshold),
    ]
}

/// What the report says about where and how it ran.
pub struct Context {
    /// The machine, in words.
    pub machine: String,
    /// The date (UTC).
    pub date: String,
    /// The backend.
    pub backend: String,
    /// The share of each row's steps run (`None`: the whole budget).
    pub budget: Option<f64>,
}

/// The report's HTML: the table, then per row its plots and any failed runs.
pub fn html(suite: &Suite, results: &[Vec<RunResult>], context: &Context) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>rlgraph bench {0}</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:1000px}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #bbb;padding:4px 8px;text-align:right}}td:first-child,th:first-child{{text-align:left}}\
         .fail{{color:#a00}}</style></head><body><h1>rlgraph bench: {0}</h1><p>{1}</p>\
         <p>{2}, {3} backend, {4}.</p>",
        escape(&suite.name),
        escape(&suite.description),
        escape(&context.machine),
        escape(&context.backend),
        escape(&context.date)
    );
    if let Some(b) = context.budget {
        let _ = write!(
            s,
            "<p><strong>Budget scaled to {:.0}% of each row's steps: the results are not comparable with the published ones.</strong></p>",
            b * 100.0
        );
    }
    let paused: usize = results.iter().flatten().filter(|r| r.paused_at.is_some()).count();
    if paused > 0 {
        let _ = write!(
            s,
            "<p><strong>{paused} run(s) paused short of their steps (<code>--pause-at</code>): their rows show the latest round, not the final one, and match nothing; <code>rlgraph bench --resume</code> continues them.</strong></p>"
        );
    }
    s.push_str(
        "<table><tr><th>row</th><th>environment</th><th>steps</th><th>runs</th><th>final greedy return (mean ± sample std over seeds)</th>\
         <th>final training return (last 100 episodes)</th><th>threshold (measure)</th><th>reached (seeds; mean steps, seconds)</th>\
         <th>published</th><th>matches</th></tr>",
    );
    for (row, runs) in suite.rows.iter().zip(results) {
        let m = summarize(row, runs, context.budget.is_none());
        let fmt = |v: Option<(f64, f64)>| v.map_or("-".into(), |(a, b)| format!("{a:.1} ± {b:.1}"));
        let reached = match m.solved {
            Some((0, _, _)) => "none".to_string(),
            Some((k, steps, secs)) => format!("{k}/{}; {steps:.0}, {secs:.1} s", m.finished.0),
            None => "-".into(),
        };
        let published = row.published.as_ref().map_or("-".into(), |p| {
            format!("{:.1} ± {:.1} ({})", p.mean, p.std, escape(&p.source))
        });
        let matches = m.matches.map_or("-", |ok| if ok { "yes" } else { "no" });
        let runs_cell = match m.paused {
            0 => format!("{}/{}", m.finished.0, m.finished.1),
            k => format!("{}/{} ({k} paused)", m.finished.0, m.finished.1),
        };
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&row.name),
            escape(&row.env),
            runs.first().map_or(row.timesteps, |r| r.steps),
            runs_cell,
            fmt(m.final_return),
            fmt(m.final_training),
            row.threshold.map_or("-".into(), |t| {
                let measure = match row.measure {
                    Measure::Greedy => "greedy",
                    Measure::Training => "training",
                };
                format!("{t} ({measure})")
            }),
            reached,
            published,
            matches
        );
    }
    s.push_str("</table>");
    for (row, runs) in suite.rows.iter().zip(results) {
        let _ = write!(s, "<h2>{}</h2>", escape(&row.name));
        for plot in row_plots(row, runs) {
            s.push_str(&plot);
        }
        for r in runs {
            if let Err(e) = &r.outcome {
                let _ = write!(s, "<p class=\"fail\">seed {} failed: {}</p>", r.seed, escape(e));
            }
            if let Some(at) = r.paused_at {
                let _ = write!(s, "<p>seed {} paused at step {at} of {}.</p>", r.seed, r.steps);
            }
        }
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Published;

    #[test]
    fn the_training_curve_is_the_moving_mean_with_its_range() {
        // By hand, window 2: [1], [1, 3], [3, 2], [2, 8].
        let b = moving_band(&[1.0, 3.0, 2.0, 8.0], 2);
        assert_eq!(b.x, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(b.mean, [1.0, 2.0, 2.5, 5.0]);
        assert_eq!(b.low, [1.0, 1.0, 2.0, 2.0]);
        assert_eq!(b.high, [1.0, 3.0, 3.0, 8.0]);
        let svg = episode_curve("dqn on <CartPole>", &[1.0, 3.0, 2.0, 8.0], 2);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
        assert!(svg.contains("dqn on &lt;CartPole&gt;") && svg.contains("mean return of the last 2 episodes"));
        // One point of the line per episode.
        let line = svg
            .split("<polyline points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(line.split(' ').count(), 4, "{line}");
    }

    fn row() -> Row {
        Row {
            name: "r".into(),
            config: "c.json".into(),
            env: "CartPole-v1".into(),
            eval_env: None,
            timesteps: 300,
            seeds: vec![0, 1, 2],
            num_envs: 1,
            eval_every: 100,
            eval_episodes: 20,
            threshold: Some(100.0),
            published: Some(Published {
                mean: 120.0,
                std: 10.0,
                source: "somewhere".into(),
            }),
            measure: Measure::Greedy,
        }
    }

    fn run(seed: u64, returns: &[f64]) -> RunResult {
        let curve = returns
            .iter()
            .enumerate()
            .map(|(i, &r)| CurvePoint {
                step: 100 * (i as u64 + 1),
                seconds: (i + 1) as f64 * (seed + 1) as f64,
                train_return: f64::NAN,
                eval_return: r,
            })
            .collect();
        RunResult {
            seed,
            steps: 300,
            outcome: Ok(curve),
            paused_at: None,
        }
    }

    #[test]
    fn the_table_counts_by_hand() {
        let runs = vec![
            run(0, &[10.0, 100.0, 110.0]),
            run(1, &[20.0, 50.0, 130.0]),
            RunResult {
                seed: 2,
                steps: 300,
                outcome: Err("diverged".into()),
                paused_at: None,
            },
            RunResult {
                seed: 3,
                steps: 300,
                outcome: Ok(vec![]),
                paused_at: None,
            },
        ];
        let m = summarize(&row(), &runs, true);
        // The diverged run and the one without an evaluation round did not finish.
        assert_eq!(m.finished, (2, 4));
        // Finals 110 and 130: mean 120, sample std sqrt((100 + 100) / 1).
        assert_eq!(m.final_return, Some((120.0, 200f64.sqrt())));
        // Seed 0 reached 100 at step 200 (2 s), seed 1 at step 300 (6 s).
        assert_eq!(m.solved, Some((2, 250.0, 4.0)));
        // 120 >= 120 - 10; a run cut short by a budget matches nothing.
        assert_eq!(m.matches, Some(true));
        assert_eq!(summarize(&row(), &runs, false).matches, None);
        let mut strict = row();
        strict.published = Some(Published {
            mean: 140.0,
            std: 5.0,
            source: String::new(),
        });
        assert_eq!(summarize(&strict, &runs, true).matches, Some(false));
        // A paused run's last round is not final: the row matches nothing until it resumes.
        let mut paused = runs.clone();
        paused[1].paused_at = Some(300);
        let m = summarize(&row(), &paused, true);
        assert_eq!((m.paused, m.matches), (1, None));
    }

    #[test]
    fn a_training_measure_row_is_held_to_the_training_returns() {
        // The same greedy rounds, with training returns beside them: the row's threshold
        // and published result now read the training column, the greedy one stays reported.
        let with_training = |seed: u64, greedy: &[f64], training: &[f64]| {
            let mut r = run(seed, greedy);
            if let Ok(curve) = &mut r.outcome {
                for (p, &t) in curve.iter_mut().zip(training) {
                    p.train_return = t;
                }
            }
            r
        };
        let runs = vec![
            with_training(0, &[10.0, 100.0, 110.0], &[5.0, 90.0, 101.0]),
            with_training(1, &[20.0, 50.0, 130.0], &[f64::NAN, 40.0, 99.0]),
        ];
        let mut training = row();
        training.measure = Measure::Training;
        let m = summarize(&training, &runs, true);
        assert_eq!(m.final_return, Some((120.0, 200f64.sqrt())));
        // Finals 101 and 99: mean 100, sample std sqrt((1 + 1) / 1).
        assert_eq!(m.final_training, Some((100.0, 2f64.sqrt())));
        // Only seed 0 reaches 100 in training, at its third round (step 300, 3 s).
        assert_eq!(m.solved, Some((1, 300.0, 3.0)));
        // 100 < 120 - 10 in training, where the greedy 120 would have matched.
        assert_eq!(m.matches, Some(false));
        assert_eq!(summarize(&row(), &runs, true).matches, Some(true));
    }

    #[test]
    fn the_band_spans_the_seeds_and_the_plot_draws_it() {
        let empty = RunResult {
            seed: 2,
            steps: 300,
            outcome: Ok(vec![]),
            paused_at: None,
        };
        let runs = vec![run(0, &[10.0, 100.0]), run(1, &[30.0, 50.0]), empty];
        let b = band(&runs, |p| p[0].step as f64);
        assert_eq!(
            (b.x, b.mean, b.low, b.high),
            (
                vec![100.0, 200.0],
                vec![20.0, 75.0],
                vec![10.0, 50.0],
                vec![30.0, 100.0]
            )
        );
        let [steps, _] = row_plots(&row(), &runs);
        assert!(steps.starts_with("<svg") && steps.contains("<polyline") && steps.contains("stroke-dasharray"));
        assert_eq!(ticks(0.0, 1000.0), vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        assert_eq!(label(250_000.0), "250k");
    }
}
