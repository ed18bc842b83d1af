//! The cross-stack breakdown, as RL-Scope computes it: every instant of a thread belongs to
//! its innermost phase and operation, and to exactly one category (GPU work if any runs,
//! else the innermost capture, else the framework), so overlapping scopes count once.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::calibration::Calibration;
use crate::event::{Category, Event, Kind};

/// Time attributed to one (phase, operation) pair, by category.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// The innermost phase (`(none)` outside every phase).
    pub phase: String,
    /// The innermost operation (`(none)` outside every operation).
    pub operation: String,
    /// Nanoseconds per category.
    pub nanos: BTreeMap<Category, f64>,
    /// Annotation events whose bookkeeping landed in this row's time.
    pub annotation_events: u64,
    /// Capture events whose bookkeeping landed in this row's time.
    pub capture_events: u64,
    /// Where that bookkeeping landed: (annotation, capture) events per category.
    pub landed: BTreeMap<Category, (u64, u64)>,
}

impl Row {
    /// The row's time over all categories.
    pub fn total(&self) -> f64 {
        self.nanos.values().sum()
    }
}

/// A profile's time split by phase, operation and category.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// The rows, ordered by phase, then operation.
    pub rows: Vec<Row>,
    /// Annotation events in the profile (phases and operations).
    pub annotation_events: u64,
    /// Capture events in the profile.
    pub capture_events: u64,
}

const NONE: &str = "(none)";

/// One stretch of a thread's time with the same scopes open.
struct Segment {
    start: u64,
    end: u64,
    row: usize,
    category: Category,
}

/// The innermost open event of `kind` (the latest started; ties go to the later index,
/// which sorts the shorter of two equal starts last).
fn innermost<'a>(events: &'a [Event], open: &[usize], keep: impl Fn(&Event) -> bool) -> Option<&'a Event> {
    open.iter()
        .copied()
        .filter(|&i| keep(&events[i]))
        .max_by_key(|&i| (events[i].start, i))
        .map(|i| &events[i])
}

impl Breakdown {
    /// Splits the time of `events` (from any threads) into rows and categories.
    pub fn from_events(events: &[Event]) -> Breakdown {
        let mut rows: BTreeMap<(String, String), Row> = BTreeMap::new();
        let mut out = Breakdown::default();
        let mut threads: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
        for e in events {
            match e.kind {
                Kind::Capture(_) => out.capture_events += 1,
                _ => out.annotation_events += 1,
            }
            threads.entry(e.thread).or_default().push(e.clone());
        }
        for mut thread in threads.into_values() {
            thread.sort_by_key(|a| (a.start, std::cmp::Reverse(a.end)));
            let segments = Self::sweep(&thread, &mut rows);
            // An event's bookkeeping runs just after it closes, in whatever encloses it then.
            for e in &thread {
                let at = segments.partition_point(|s| s.end <= e.end);
                let Some(seg) = segments.get(at).filter(|s| s.start <= e.end) else {
                    continue;
                };
                let key = rows.keys().nth(seg.row).cloned();
                if let Some(row) = key.and_then(|k| rows.get_mut(&k)) {
                    let landed = row.landed.entry(seg.category).or_default();
                    match e.kind {
                        Kind::Capture(_) => {
                            row.capture_events += 1;
                            landed.1 += 1;
                        }
                        _ => {
                            row.annotation_events += 1;
                            landed.0 += 1;
                        }
                    }
                }
            }
        }
        out.rows = rows.into_values().collect();
        out
    }

    /// Walks one thread's events (sorted by start) boundary by boundary, adding each stretch
    /// to its row; returns the stretches with the index of their row.
    fn sweep(events: &[Event], rows: &mut BTreeMap<(String, String), Row>) -> Vec<Segment> {
        let mut points: Vec<u64> = events.iter().flat_map(|e| [e.start, e.end]).collect();
        points.sort_unstable();
        points.dedup();
        let mut stretches: Vec<(u64, u64, (String, String), Category)> = vec![];
        let mut first_open = 0;
        let mut open: Vec<usize> = vec![];
        for w in points.windows(2) {
            let (a, b) = (w[0], w[1]);
            open.retain(|&i| events[i].end > a);
            while first_open < events.len() && events[first_open].start <= a {
                if events[first_open].end > a {
                    open.push(first_open);
                }
                first_open += 1;
            }
            if open.is_empty() {
                continue;
            }
            let phase = innermost(events, &open, |e| e.kind == Kind::Phase);
            let op = innermost(events, &open, |e| e.kind == Kind::Operation);
            let gpu = open.iter().any(|&i| events[i].kind == Kind::Capture(Category::Gpu));
            let category = if gpu {
                Category::Gpu
            } else {
                match innermost(events, &open, |e| matches!(e.kind, Kind::Capture(_))).map(|e| e.kind) {
                    Some(Kind::Capture(c)) => c,
                    _ => Category::Framework,
                }
            };
            let key = (
                phase.map_or(NONE, |e| e.name.as_str()).to_string(),
                op.map_or(NONE, |e| e.name.as_str()).to_string(),
            );
            let row = rows.entry(key.clone()).or_insert_with(|| Row {
                phase: key.0.clone(),
                operation: key.1.clone(),
                ..Row::default()
            });
            *row.nanos.entry(category).or_default() += (b - a) as f64;
            stretches.push((a, b, key, category));
        }
        let index: BTreeMap<&(String, String), usize> = rows.keys().enumerate().map(|(i, k)| (k, i)).collect();
        stretches
            .iter()
            .map(|(start, end, key, category)| Segment {
                start: *start,
                end: *end,
                row: index[key],
                category: *category,
            })
            .collect()
    }

    /// The whole profile's time.
    pub fn total(&self) -> f64 {
        self.rows.iter().map(Row::total).sum()
    }

    /// The time of each operation over all phases, by category.
    pub fn by_operation(&self) -> BTreeMap<String, BTreeMap<Category, f64>> {
        let mut out: BTreeMap<String, BTreeMap<Category, f64>> = BTreeMap::new();
        for row in &self.rows {
            let entry = out.entry(row.operation.clone()).or_default();
            for (c, ns) in &row.nanos {
                *entry.entry(*c).or_default() += ns;
            }
        }
        out
    }

    /// The breakdown with the profiler's own cost taken out: each event's bookkeeping cost
    /// (from `calibration`) comes off the category it landed in, just after the event
    /// closed (never below zero).
    pub fn corrected(&self, calibration: &Calibration) -> Breakdown {
        let mut out = self.clone();
        for row in &mut out.rows {
            for (category, (annotations, captures)) in &row.landed {
                let ns = row.nanos.entry(*category).or_default();
                *ns = (*ns - calibration.overhead(*annotations, *captures)).max(0.0);
            }
        }
        out
    }

    /// The breakdown as a text table: one line per phase and operation, milliseconds per
    /// category, and each row's share of the total.
    pub fn table(&self) -> String {
        let total = self.total().max(1.0);
        let mut out = format!("{:<18} {:<18}", "phase", "operation");
        for c in Category::ALL {
            let _ = write!(out, " {:>10}", c.name());
        }
        let _ = writeln!(out, " {:>10} {:>7}", "total ms", "share");
        for row in &self.rows {
            let _ = write!(out, "{:<18} {:<18}", row.phase, row.operation);
            for c in Category::ALL {
                let _ = write!(out, " {:>10.2}", row.nanos.get(&c).copied().unwrap_or(0.0) / 1e6);
            }
            let _ = writeln!(
                out,
                " {:>10.2} {:>6.1}%",
                row.total() / 1e6,
                100.0 * row.total() / total
            );
        }
        out
    }
}
