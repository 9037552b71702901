//! One SVG bar chart per (workload, op) with plotters: engines on the x axis, the
//! median on the y axis, QuireDB (when present) in its own colour.

use crate::error::{BenchError, Result};
use crate::results::{Record, Unit};
use plotters::prelude::*;
use std::path::Path;

/// A file-name-safe slug of an op name.
pub fn slug(text: &str) -> String {
    let s: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

/// Draws one op's bars into `<dir>/<prefix>-<op>.svg` (the prefix tells apart the
/// data sets of a workload run at several sizes); returns the file name.
pub fn chart(prefix: &str, workload: &str, op: &str, unit: Unit, rows: &[&Record], dir: &Path) -> Result<String> {
    let name = format!("{prefix}-{}.svg", slug(op));
    let path = dir.join(&name);
    let fail = |e: &dyn std::fmt::Display| BenchError::Plot { path: path.clone(), reason: e.to_string() };
    let width = 160 + 110 * rows.len() as u32;
    let root = SVGBackend::new(&path, (width.max(480), 360)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let top = rows.iter().map(|r| r.max.max(r.value)).fold(0.0f64, f64::max).max(1e-12) * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{workload}: {op}"), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..rows.len()).into_segmented(), 0.0..top)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(unit.label())
        .x_labels(rows.len())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => rows.get(*i).map_or(String::new(), |r| r.engine.clone()),
            _ => String::new(),
        })
        .draw()
        .map_err(|e| fail(&e))?;
    let bars = rows.iter().enumerate().map(|(i, r)| {
        let colour = if r.engine == "quiredb" { RED } else { BLUE };
        Rectangle::new([(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), r.value)], colour.mix(0.6).filled())
    });
    chart.draw_series(bars).map_err(|e| fail(&e))?;
    let whiskers = rows.iter().enumerate().map(|(i, r)| {
        PathElement::new(
            vec![(SegmentValue::CenterOf(i), r.min), (SegmentValue::CenterOf(i), r.max)],
            BLACK.stroke_width(2),
        )
    });
    chart.draw_series(whiskers).map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(name)
}
