//! Fits a [`Calibration`] from observations with the measures TEMP, PRES, DEWP, RAIN,
//! WSPM in that order (the `beijing` preset). The method is described in
//! `calibration.rs`; this file is its executable form, run by the integration test that
//! checks the recorded constants.
//!
//! Rows are held in memory (about 56 bytes each; 24 MB for the Beijing file).

use std::collections::HashMap;
use std::io::Read;

use super::calibration::{BASIS_TERMS, CYCLED, Calibration, RainMonth, StationModel, basis};
use super::fields::civil_from_days;
use super::reader::{ObservationReader, ReadOutcome};
use super::{DEFAULT_MEASURES, Observation};
use crate::error::{Error, Result};

const RAIN: usize = 3;
const HOUR: i64 = 3_600;

/// One row reduced to what the fit needs; NaN = missing.
struct Row {
    station: usize,
    time: i64,
    measures: [f64; DEFAULT_MEASURES],
}

impl Row {
    /// TEMP, PRES, DEWP, √WSPM.
    fn cycled(&self) -> [f64; CYCLED] {
        let [temp, pres, dewp, _, wspm] = self.measures;
        [temp, pres, dewp, wspm.sqrt()]
    }
}

/// Fits the generator's parameters on every good row of `reader` (bad rows stop it).
pub fn fit<R: Read>(reader: &mut ObservationReader<R>) -> Result<Calibration> {
    let (names, rows) = collect(reader)?;
    let stations = fit_cycles(&names, &rows)?;
    let residuals: Vec<[f64; CYCLED]> = rows.iter().map(|row| residual(&stations[row.station], row)).collect();
    let ar_phi = fit_phi(&rows, &residuals);
    let innovation_cholesky = cholesky(&innovation_covariance(&rows, &residuals, &ar_phi))?;
    Ok(Calibration { stations, ar_phi, innovation_cholesky, rain: fit_rain(&rows), missing_rate: missing_rates(&rows) })
}

fn collect<R: Read>(reader: &mut ObservationReader<R>) -> Result<(Vec<String>, Vec<Row>)> {
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut rows = Vec::new();
    let mut observation = Observation::default();
    loop {
        match reader.read(&mut observation)? {
            ReadOutcome::End => break,
            ReadOutcome::Bad(error) => return Err(error),
            ReadOutcome::Row => {}
        }
        if observation.measures.len() != DEFAULT_MEASURES {
            return Err(Error::Argument("fitting needs the measures TEMP, PRES, DEWP, RAIN, WSPM".into()));
        }
        let station = *index.entry(observation.station.clone()).or_insert_with(|| {
            names.push(observation.station.clone());
            names.len() - 1
        });
        let mut measures = [f64::NAN; DEFAULT_MEASURES];
        for (slot, value) in measures.iter_mut().zip(&observation.measures) {
            *slot = value.unwrap_or(f64::NAN);
        }
        rows.push(Row { station, time: observation.time, measures });
    }
    Ok((names, rows))
}

/// Least squares of each cycled variable on the basis, per station.
fn fit_cycles(names: &[String], rows: &[Row]) -> Result<Vec<StationModel>> {
    let mut normal = vec![[([[0.0; BASIS_TERMS]; BASIS_TERMS], [0.0; BASIS_TERMS]); CYCLED]; names.len()];
    for row in rows {
        let f = basis(row.time);
        for (variable, value) in row.cycled().into_iter().enumerate() {
            if value.is_nan() {
                continue;
            }
            let (xtx, xty) = &mut normal[row.station][variable];
            for i in 0..BASIS_TERMS {
                xty[i] += f[i] * value;
                for j in 0..BASIS_TERMS {
                    xtx[i][j] += f[i] * f[j];
                }
            }
        }
    }
    names
        .iter()
        .zip(normal)
        .map(|(name, systems)| {
            let mut coefficients = [[0.0; BASIS_TERMS]; CYCLED];
            for (slot, (xtx, xty)) in coefficients.iter_mut().zip(systems) {
                *slot =
                    solve(xtx, xty).ok_or_else(|| Error::Argument(format!("too few rows to fit station {name:?}")))?;
            }
            Ok(StationModel { name: name.clone(), coefficients })
        })
        .collect()
}

fn residual(model: &StationModel, row: &Row) -> [f64; CYCLED] {
    let f = basis(row.time);
    let mut out = row.cycled();
    for (value, coefficients) in out.iter_mut().zip(&model.coefficients) {
        *value -= coefficients.iter().zip(&f).map(|(c, x)| c * x).sum::<f64>();
    }
    out
}

/// Pairs (previous, current) of consecutive hours of one station, all cycled present.
fn hourly_pairs<'a>(
    rows: &'a [Row],
    residuals: &'a [[f64; CYCLED]],
) -> impl Iterator<Item = (&'a [f64; CYCLED], &'a [f64; CYCLED])> {
    let complete = |r: &[f64; CYCLED]| r.iter().all(|value| !value.is_nan());
    (1..rows.len()).filter_map(move |i| {
        let consecutive = rows[i].station == rows[i - 1].station && rows[i].time - rows[i - 1].time == HOUR;
        (consecutive && complete(&residuals[i]) && complete(&residuals[i - 1]))
            .then(|| (&residuals[i - 1], &residuals[i]))
    })
}

fn fit_phi(rows: &[Row], residuals: &[[f64; CYCLED]]) -> [f64; CYCLED] {
    let (mut lagged, mut squares) = ([0.0; CYCLED], [0.0; CYCLED]);
    for (previous, current) in hourly_pairs(rows, residuals) {
        for v in 0..CYCLED {
            lagged[v] += current[v] * previous[v];
            squares[v] += previous[v] * previous[v];
        }
    }
    std::array::from_fn(|v| if squares[v] > 0.0 { lagged[v] / squares[v] } else { 0.0 })
}

fn innovation_covariance(rows: &[Row], residuals: &[[f64; CYCLED]], phi: &[f64; CYCLED]) -> [[f64; CYCLED]; CYCLED] {
    let mut sums = [[0.0; CYCLED]; CYCLED];
    let mut count = 0.0;
    for (previous, current) in hourly_pairs(rows, residuals) {
        let e: [f64; CYCLED] = std::array::from_fn(|v| current[v] - phi[v] * previous[v]);
        for i in 0..CYCLED {
            for j in 0..CYCLED {
                sums[i][j] += e[i] * e[j];
            }
        }
        count += 1.0;
    }
    sums.map(|row| row.map(|sum| sum / f64::max(count, 1.0)))
}

fn fit_rain(rows: &[Row]) -> [RainMonth; 12] {
    // Per month: [dry→dry, dry→wet, wet→dry, wet→wet, wet hours, wet mm].
    let mut counts = [[0.0f64; 6]; 12];
    for (i, row) in rows.iter().enumerate() {
        let rain = row.measures[RAIN];
        if rain.is_nan() {
            continue;
        }
        let month = (civil_from_days(row.time.div_euclid(86_400)).1 - 1) as usize;
        let wet = rain > 0.0;
        if wet {
            counts[month][4] += 1.0;
            counts[month][5] += rain;
        }
        let previous = i.checked_sub(1).map(|p| &rows[p]);
        let consecutive = |p: &&Row| p.station == row.station && row.time - p.time == HOUR;
        if let Some(prev) = previous.filter(consecutive).filter(|p| !p.measures[RAIN].is_nan()) {
            let from_wet = prev.measures[RAIN] > 0.0;
            counts[month][usize::from(from_wet) * 2 + usize::from(wet)] += 1.0;
        }
    }
    counts.map(|[dd, dw, wd, ww, wet_hours, wet_mm]| RainMonth {
        wet_after_dry: ratio(dw, dd + dw),
        wet_after_wet: ratio(ww, wd + ww),
        mean_wet_mm: ratio(wet_mm, wet_hours),
    })
}

fn missing_rates(rows: &[Row]) -> [f64; DEFAULT_MEASURES] {
    let mut missing = [0.0; DEFAULT_MEASURES];
    for row in rows {
        for (slot, value) in missing.iter_mut().zip(&row.measures) {
            *slot += f64::from(u8::from(value.is_nan()));
        }
    }
    missing.map(|count| ratio(count, rows.len() as f64))
}

fn ratio(numerator: f64, denominator: f64) -> f64 {
    if denominator > 0.0 { numerator / denominator } else { 0.0 }
}

/// Solves `a·x = b` by Gaussian elimination with partial pivoting; `None` if singular.
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> Option<[f64; N]> {
    for col in 0..N {
        let pivot = (col..N).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, target) in lower.iter_mut().enumerate() {
            let factor = target[col] / pivot_row[col];
            for (cell, pivot_cell) in target.iter_mut().zip(pivot_row).skip(col) {
                *cell -= factor * pivot_cell;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = [0.0; N];
    for row in (0..N).rev() {
        let tail: f64 = (row + 1..N).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    Some(x)
}

/// Lower-triangular L with L·Lᵀ = `a`; an error if `a` is not positive definite.
fn cholesky(a: &[[f64; CYCLED]; CYCLED]) -> Result<[[f64; CYCLED]; CYCLED]> {
    let mut l = [[0.0; CYCLED]; CYCLED];
    for i in 0..CYCLED {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let diagonal = a[i][i] - sum;
                if diagonal <= 0.0 {
                    return Err(Error::Argument("innovation covariance is not positive definite".into()));
                }
                l[i][j] = diagonal.sqrt();
            } else {
                l[i][j] = (a[i][j] - sum) / l[j][j];
            }
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the solver and the Cholesky factor on small known systems.
    #[test]
    fn linear_algebra_on_known_systems() {
        let x = solve([[2.0, 1.0], [1.0, 3.0]], [3.0, 5.0]).expect("regular system");
        assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12, "{x:?}");
        assert!(solve([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0]).is_none());
        let a = [[4.0, 2.0, 0.0, 0.0], [2.0, 5.0, 0.0, 0.0], [0.0, 0.0, 9.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let l = cholesky(&a).expect("positive definite");
        for i in 0..CYCLED {
            for j in 0..CYCLED {
                let product: f64 = (0..CYCLED).map(|k| l[i][k] * l[j][k]).sum();
                assert!((product - a[i][j]).abs() < 1e-12);
            }
        }
    }
}
