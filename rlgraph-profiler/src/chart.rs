//! The breakdown as a stacked-bar chart: one bar per operation, one colour per category.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use crate::event::Category;
use crate::trace::ProfileError;

fn colour(c: Category) -> RGBColor {
    match c {
        Category::Framework => RGBColor(0x8c, 0x95, 0x9f),
        Category::Backend => RGBColor(0x09, 0x69, 0xda),
        Category::Gpu => RGBColor(0x1a, 0x7f, 0x37),
        Category::Transfer => RGBColor(0xbf, 0x87, 0x00),
        Category::Simulator => RGBColor(0xcf, 0x22, 0x2e),
    }
}

/// Draws `by_operation` (milliseconds are nanoseconds / 1e6) as horizontal stacked bars
/// into an SVG file at `path`, titled `title`.
pub fn stacked_bars(
    by_operation: &BTreeMap<String, BTreeMap<Category, f64>>,
    title: &str,
    path: &Path,
) -> Result<(), ProfileError> {
    let failed = |e: String| ProfileError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    };
    let ops: Vec<(&String, &BTreeMap<Category, f64>)> = by_operation.iter().collect();
    let longest = ops
        .iter()
        .map(|(_, c)| c.values().sum::<f64>() / 1e6)
        .fold(0.0, f64::max)
        .max(1e-3);
    let height = 120 + 40 * ops.len() as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| failed(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(150)
        .build_cartesian_2d(0.0..longest * 1.05, (0..ops.len()).into_segmented())
        .map_err(|e| failed(e.to_string()))?;
    let names: Vec<String> = ops.iter().map(|(n, _)| (*n).clone()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("milliseconds")
        .y_labels(ops.len().max(1))
        .y_label_formatter(&|y| match y {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => names.get(*i).cloned().unwrap_or_default(),
            SegmentValue::Last => String::new(),
        })
        .draw()
        .map_err(|e| failed(e.to_string()))?;
    for c in Category::ALL {
        let bars: Vec<Rectangle<(f64, SegmentValue<usize>)>> = ops
            .iter()
            .enumerate()
            .filter_map(|(i, (_, cats))| {
                let before: f64 = Category::ALL
                    .iter()
                    .take_while(|&&k| k != c)
                    .map(|k| cats.get(k).copied().unwrap_or(0.0))
                    .sum();
                let len = cats.get(&c).copied().unwrap_or(0.0);
                (len > 0.0).then(|| {
                    let mut bar = Rectangle::new(
                        [
                            (before / 1e6, SegmentValue::Exact(i)),
                            ((before + len) / 1e6, SegmentValue::Exact(i + 1)),
                        ],
                        colour(c).filled(),
                    );
                    bar.set_margin(6, 6, 0, 0);
                    bar
                })
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| failed(e.to_string()))?
            .label(c.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour(c).filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| failed(e.to_string()))?;
    root.present().map_err(|e| failed(e.to_string()))
}
