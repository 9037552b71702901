//! The generator's model and its parameters fitted on the Beijing data.
//!
//! Model, per station, for the four "cycled" variables v ∈ (TEMP °C, PRES hPa, DEWP °C,
//! √WSPM): `v(t) = Σ_k c_vk·f_k(t) + r_v(t)` with the nine [`basis`] terms f_k (mean,
//! annual and half-annual harmonics of t, daily and half-daily harmonics of the hour),
//! and a residual r(t) = φ·r(t−1h) + L·z, z ~ N(0, I₄): an AR(1) per variable whose
//! innovations are correlated through the lower-triangular Cholesky factor L (this is
//! what couples temperature, dew point and pressure). Then DEWP = min(DEWP, TEMP),
//! WSPM = (√WSPM)². RAIN is a two-state Markov chain per calendar month (P(wet | dry),
//! P(wet | wet)) with exponentially distributed wet-hour amounts. Each measure is missing
//! independently with its fitted rate.
//!
//! How the constants were fitted (`fit.rs`, reproducible: run
//! `QUIRE_PRINT_CALIBRATION=1 cargo test --release -p quiredb-datasets --test meteo
//! calibration -- --nocapture` and paste the printed block here; the same test checks
//! these constants against a fresh fit): ordinary least squares of each variable on the
//! basis, per station, over rows where the variable is present; φ_v = Σ r_t·r_{t−1} /
//! Σ r_{t−1}² over consecutive hours of one station with all four present; L = Cholesky
//! of the covariance of the innovations r_t − φ·r_{t−1}, pooled over stations; rain and
//! missing rates are counts pooled over stations. Time is the file's civil time taken as
//! UTC. Source: `beijing_multisite_all_stations.csv` (UCI 501, CC BY 4.0), 420,768 rows.
//!
//! Noticed while fitting: the twelve air-quality sites share meteorological series
//! (Aotizhongxin ≈ Guanyuan, Changping = Dingling, Dongsi = Nongzhanguan = Tiantan; the
//! UCI set took weather from the nearest met station), so several stations below have
//! identical coefficients. That is the data, not a bug.

/// Number of cycled variables: TEMP, PRES, DEWP, √WSPM.
pub const CYCLED: usize = 4;

/// Number of basis terms of the seasonal/daily model.
pub const BASIS_TERMS: usize = 9;

/// Seconds of a mean Gregorian year, the period of the annual harmonics.
pub const YEAR_SECONDS: f64 = 365.2425 * 86_400.0;

/// The basis f_k(t) at `time` seconds since the epoch.
pub fn basis(time: i64) -> [f64; BASIS_TERMS] {
    let year_angle = std::f64::consts::TAU * (time as f64 / YEAR_SECONDS);
    let day_angle = std::f64::consts::TAU * (time.rem_euclid(86_400) as f64 / 86_400.0);
    let (year_sin, year_cos) = year_angle.sin_cos();
    let (day_sin, day_cos) = day_angle.sin_cos();
    [
        1.0,
        year_cos,
        year_sin,
        2.0 * year_cos * year_cos - 1.0,
        2.0 * year_sin * year_cos,
        day_cos,
        day_sin,
        2.0 * day_cos * day_cos - 1.0,
        2.0 * day_sin * day_cos,
    ]
}

/// The seasonal/daily coefficients of one station.
#[derive(Debug, Clone, PartialEq)]
pub struct StationModel {
    /// Station name in the source data.
    pub name: String,
    /// `coefficients[v][k]` for cycled variable v and basis term k.
    pub coefficients: [[f64; BASIS_TERMS]; CYCLED],
}

/// Rain chain parameters for one calendar month.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RainMonth {
    /// P(this hour wet | previous hour dry).
    pub wet_after_dry: f64,
    /// P(this hour wet | previous hour wet).
    pub wet_after_wet: f64,
    /// Mean rain of a wet hour, mm.
    pub mean_wet_mm: f64,
}

/// Every parameter of the generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Per-station seasonal and daily cycles.
    pub stations: Vec<StationModel>,
    /// AR(1) coefficient per cycled variable (hourly).
    pub ar_phi: [f64; CYCLED],
    /// Lower-triangular Cholesky factor of the innovation covariance.
    pub innovation_cholesky: [[f64; CYCLED]; CYCLED],
    /// Rain chain per month, January first.
    pub rain: [RainMonth; 12],
    /// Fraction of rows missing each measure (TEMP, PRES, DEWP, RAIN, WSPM).
    pub missing_rate: [f64; 5],
}

impl Calibration {
    /// The parameters fitted on the Beijing data (see the module docs).
    pub fn beijing() -> Calibration {
        Calibration {
            stations: BEIJING_STATIONS
                .iter()
                .map(|(name, coefficients)| StationModel {
                    name: (*name).to_owned(),
                    coefficients: *coefficients,
                })
                .collect(),
            ar_phi: BEIJING_AR_PHI,
            innovation_cholesky: BEIJING_INNOVATION_CHOLESKY,
            rain: BEIJING_RAIN.map(|[wet_after_dry, wet_after_wet, mean_wet_mm]| RainMonth {
                wet_after_dry,
                wet_after_wet,
                mean_wet_mm,
            }),
            missing_rate: BEIJING_MISSING_RATE,
        }
    }

    /// These parameters as the Rust constants block of this file.
    pub fn to_rust_source(&self) -> String {
        let mut out = String::from("// --- fitted constants (generated by fit.rs) ---\n");
        out += "#[rustfmt::skip]\nconst BEIJING_STATIONS: [(&str, [[f64; BASIS_TERMS]; CYCLED]); 12] = [\n";
        for station in &self.stations {
            out += &format!("    ({:?}, [\n", station.name);
            for row in &station.coefficients {
                out += &format!("        {},\n", float_row(row));
            }
            out += "    ]),\n";
        }
        out += "];\n";
        out += &format!(
            "const BEIJING_AR_PHI: [f64; CYCLED] = {};\n",
            float_row(&self.ar_phi)
        );
        out += "#[rustfmt::skip]\nconst BEIJING_INNOVATION_CHOLESKY: [[f64; CYCLED]; CYCLED] = [\n";
        for row in &self.innovation_cholesky {
            out += &format!("    {},\n", float_row(row));
        }
        out += "];\n#[rustfmt::skip]\nconst BEIJING_RAIN: [[f64; 3]; 12] = [\n";
        for month in &self.rain {
            out += &format!(
                "    {},\n",
                float_row(&[month.wet_after_dry, month.wet_after_wet, month.mean_wet_mm])
            );
        }
        out += "];\n";
        out += &format!(
            "const BEIJING_MISSING_RATE: [f64; 5] = {};\n",
            float_row(&self.missing_rate)
        );
        out
    }
}

fn float_row(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|value| format!("{value:.6e}")).collect();
    format!("[{}]", items.join(", "))
}

// --- fitted constants (generated by fit.rs) ---
#[rustfmt::skip]
const BEIJING_STATIONS: [(&str, [[f64; BASIS_TERMS]; CYCLED]); 12] = [
    ("Aotizhongxin", [
        [1.358020e1, -1.445590e1, -2.862067e0, -1.205798e0, 3.628213e-1, -2.913759e0, -2.875567e0, 7.351110e-1, 4.095907e-1],
        [1.011851e3, 1.245627e1, 1.093839e-1, -6.545860e-1, -1.191451e-1, 1.868801e-1, 9.892790e-1, 2.554448e-1, -7.210658e-1],
        [3.118787e0, -1.613728e1, -6.983280e0, -5.277328e-1, 3.834364e-1, 7.835093e-1, 3.215296e-1, -2.153885e-2, -2.063760e-1],
        [1.217184e0, 3.572134e-2, 1.532659e-1, -7.098428e-3, 5.597970e-3, -2.090796e-1, -1.196259e-1, 3.187804e-2, 2.939570e-2],
    ]),
    ("Changping", [
        [1.367172e1, -1.440921e1, -2.863758e0, -1.127417e0, 2.012962e-1, -2.897136e0, -2.885697e0, 6.090586e-1, 4.356286e-1],
        [1.007771e3, 1.230499e1, 3.062583e-2, -5.822917e-1, -9.174132e-2, 2.762315e-1, 1.052162e0, 2.220630e-1, -7.244560e-1],
        [1.486403e0, -1.618208e1, -7.158238e0, -3.828356e-1, 7.508580e-1, 3.502577e-1, 2.954708e-2, 2.057372e-2, -2.178804e-1],
        [1.284766e0, 5.171957e-2, 1.109859e-1, 1.623907e-2, -6.079412e-3, -1.976160e-1, -1.085443e-1, 5.911399e-2, 5.858821e-2],
    ]),
    ("Dingling", [
        [1.367172e1, -1.440921e1, -2.863758e0, -1.127417e0, 2.012962e-1, -2.897136e0, -2.885697e0, 6.090586e-1, 4.356286e-1],
        [1.007771e3, 1.230499e1, 3.062583e-2, -5.822917e-1, -9.174132e-2, 2.762315e-1, 1.052162e0, 2.220630e-1, -7.244560e-1],
        [1.486403e0, -1.618208e1, -7.158238e0, -3.828356e-1, 7.508580e-1, 3.502577e-1, 2.954708e-2, 2.057372e-2, -2.178804e-1],
        [1.284766e0, 5.171957e-2, 1.109859e-1, 1.623907e-2, -6.079412e-3, -1.976160e-1, -1.085443e-1, 5.911399e-2, 5.858821e-2],
    ]),
    ("Dongsi", [
        [1.366705e1, -1.460692e1, -2.881720e0, -1.214042e0, 3.199842e-1, -2.674017e0, -2.912594e0, 6.596818e-1, 3.779022e-1],
        [1.012551e3, 1.230118e1, 2.106688e-1, -7.509445e-1, 2.039456e-2, 2.091488e-1, 1.012964e0, 2.550404e-1, -7.476571e-1],
        [2.443341e0, -1.614316e1, -7.080116e0, -4.670069e-1, 6.435454e-1, 8.115467e-1, 4.795316e-1, -2.415217e-2, -2.082403e-1],
        [1.285327e0, 1.066884e-2, 1.265633e-1, -1.126158e-2, -1.424963e-2, -1.874374e-1, -1.258143e-1, 4.167751e-2, 2.180425e-2],
    ]),
    ("Guanyuan", [
        [1.358020e1, -1.445590e1, -2.862067e0, -1.205798e0, 3.628213e-1, -2.913759e0, -2.875567e0, 7.351110e-1, 4.095907e-1],
        [1.011851e3, 1.245627e1, 1.093839e-1, -6.545860e-1, -1.191451e-1, 1.868801e-1, 9.892790e-1, 2.554448e-1, -7.210658e-1],
        [3.118787e0, -1.613728e1, -6.983280e0, -5.277328e-1, 3.834364e-1, 7.835093e-1, 3.215296e-1, -2.153885e-2, -2.063760e-1],
        [1.217184e0, 3.572134e-2, 1.532659e-1, -7.098428e-3, 5.597970e-3, -2.090796e-1, -1.196259e-1, 3.187804e-2, 2.939570e-2],
    ]),
    ("Gucheng", [
        [1.385498e1, -1.432858e1, -2.782237e0, -1.187468e0, 2.133505e-1, -2.994144e0, -2.794457e0, 7.278151e-1, 3.455349e-1],
        [1.008837e3, 1.206668e1, 1.898285e-1, -7.507248e-1, 6.572808e-3, 2.112188e-1, 9.916896e-1, 2.342064e-1, -7.474334e-1],
        [2.598933e0, -1.626965e1, -6.982340e0, -3.820768e-1, 7.486815e-1, 6.483364e-1, 2.244951e-1, -6.721397e-2, -1.909832e-1],
        [1.044703e0, 9.582969e-2, 1.847674e-1, 1.870662e-2, 2.498882e-2, -2.496411e-1, -1.439677e-1, 5.385638e-2, 1.564853e-2],
    ]),
    ("Huairou", [
        [1.243059e1, -1.478584e1, -2.873827e0, -1.381225e0, 1.161855e-1, -3.522584e0, -3.173364e0, 8.546819e-1, 5.268650e-1],
        [1.007611e3, 1.191373e1, 2.502624e-1, -7.515343e-1, 1.873513e-1, 3.167178e-1, 9.968097e-1, 2.185775e-1, -7.320641e-1],
        [2.219046e0, -1.655285e1, -7.293678e0, -3.767152e-1, 8.968302e-1, 6.818422e-1, 3.912582e-1, -1.111000e-1, -2.870156e-1],
        [1.217632e0, -2.929266e-3, 1.363486e-1, -4.186038e-2, -3.832444e-2, -1.479407e-1, -1.222707e-1, 4.843888e-2, 4.072590e-2],
    ]),
    ("Nongzhanguan", [
        [1.366705e1, -1.460692e1, -2.881720e0, -1.214042e0, 3.199842e-1, -2.674017e0, -2.912594e0, 6.596818e-1, 3.779022e-1],
        [1.012551e3, 1.230118e1, 2.106688e-1, -7.509445e-1, 2.039456e-2, 2.091488e-1, 1.012964e0, 2.550404e-1, -7.476571e-1],
        [2.443341e0, -1.614316e1, -7.080116e0, -4.670069e-1, 6.435454e-1, 8.115467e-1, 4.795316e-1, -2.415217e-2, -2.082403e-1],
        [1.285327e0, 1.066884e-2, 1.265633e-1, -1.126158e-2, -1.424963e-2, -1.874374e-1, -1.258143e-1, 4.167751e-2, 2.180425e-2],
    ]),
    ("Shunyi", [
        [1.337555e1, -1.462201e1, -2.849198e0, -1.216480e0, 2.299833e-1, -2.956229e0, -2.948135e0, 6.659814e-1, 5.220266e-1],
        [1.013072e3, 1.200984e1, 4.517517e-1, -8.678964e-1, 3.597116e-1, 2.197006e-1, 1.016085e0, 2.416050e-1, -7.257720e-1],
        [2.449455e0, -1.616044e1, -6.951956e0, -4.612171e-1, 6.952253e-1, 9.499939e-1, 3.481404e-1, -6.777486e-2, -3.223308e-1],
        [1.262115e0, -1.960754e-2, 1.248241e-1, -3.001067e-3, -8.361170e-4, -2.039401e-1, -8.369178e-2, 4.724631e-2, 4.799323e-2],
    ]),
    ("Tiantan", [
        [1.366705e1, -1.460692e1, -2.881720e0, -1.214042e0, 3.199842e-1, -2.674017e0, -2.912594e0, 6.596818e-1, 3.779022e-1],
        [1.012551e3, 1.230118e1, 2.106688e-1, -7.509445e-1, 2.039456e-2, 2.091488e-1, 1.012964e0, 2.550404e-1, -7.476571e-1],
        [2.443341e0, -1.614316e1, -7.080116e0, -4.670069e-1, 6.435454e-1, 8.115467e-1, 4.795316e-1, -2.415217e-2, -2.082403e-1],
        [1.285327e0, 1.066884e-2, 1.265633e-1, -1.126158e-2, -1.424963e-2, -1.874374e-1, -1.258143e-1, 4.167751e-2, 2.180425e-2],
    ]),
    ("Wanliu", [
        [1.342447e1, -1.429844e1, -2.794126e0, -1.213891e0, 3.506570e-1, -3.274102e0, -2.943390e0, 8.285585e-1, 4.965458e-1],
        [1.011101e3, 1.245807e1, 8.706208e-2, -6.501427e-1, -8.983279e-2, 2.012830e-1, 1.001454e0, 2.460568e-1, -7.222365e-1],
        [3.262271e0, -1.625944e1, -6.882046e0, -6.457949e-1, 3.959601e-1, 8.576884e-1, 2.627643e-1, -7.073149e-2, -1.902103e-1],
        [1.130888e0, 7.195170e-2, 1.716718e-1, -1.524324e-3, 1.215916e-2, -2.324015e-1, -1.165606e-1, 2.264696e-2, 2.454049e-2],
    ]),
    ("Wanshouxigong", [
        [1.378049e1, -1.446773e1, -2.859838e0, -1.217121e0, 3.552372e-1, -2.854882e0, -2.732429e0, 6.426507e-1, 3.722056e-1],
        [1.011515e3, 1.262312e1, -3.467269e-3, -5.436821e-1, -2.656739e-1, 1.843104e-1, 9.906689e-1, 2.555806e-1, -7.434633e-1],
        [2.703741e0, -1.605696e1, -6.964416e0, -4.239924e-1, 5.880803e-1, 8.293172e-1, 2.973216e-1, -4.998003e-2, -2.022111e-1],
        [1.243138e0, 7.733907e-3, 1.184367e-1, -7.654247e-3, -1.319036e-2, -2.002164e-1, -1.129661e-1, 4.609705e-2, 2.474404e-2],
    ]),
];
const BEIJING_AR_PHI: [f64; CYCLED] = [9.603498e-1, 9.876253e-1, 9.782137e-1, 6.743462e-1];
#[rustfmt::skip]
const BEIJING_INNOVATION_CHOLESKY: [[f64; CYCLED]; CYCLED] = [
    [9.559602e-1, 0.000000e0, 0.000000e0, 0.000000e0],
    [-6.396822e-2, 8.409531e-1, 0.000000e0, 0.000000e0],
    [-3.051626e-1, -5.838241e-2, 1.157717e0, 0.000000e0],
    [4.913705e-2, 1.463948e-2, -5.311423e-2, 2.972158e-1],
];
#[rustfmt::skip]
const BEIJING_RAIN: [[f64; 3]; 12] = [
    [1.695059e-3, 2.682927e-1, 1.536585e-1],
    [5.801236e-3, 7.482900e-1, 4.412807e-1],
    [2.121161e-3, 7.754491e-1, 8.110778e-1],
    [6.091971e-3, 7.234899e-1, 1.061611e0],
    [9.935218e-3, 7.435897e-1, 1.261124e0],
    [3.151746e-2, 5.997643e-1, 1.812303e0],
    [2.938831e-2, 6.926782e-1, 3.068892e0],
    [2.104767e-2, 6.076020e-1, 1.911494e0],
    [2.649007e-2, 7.063300e-1, 1.493537e0],
    [1.016426e-2, 7.449128e-1, 1.072853e0],
    [9.740162e-3, 7.849031e-1, 4.378090e-1],
    [1.320781e-3, 6.209677e-1, 3.328000e-1],
];
const BEIJING_MISSING_RATE: [f64; 5] = [
    9.458894e-4,
    9.340064e-4,
    9.577725e-4,
    9.268766e-4,
    7.557609e-4,
];
