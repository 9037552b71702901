//! The station: a column named like one, a first column of text or of one large
//! integer, a field of the preamble, else the file's name.

use super::measures::PLACE_NAMES;
use super::{ColumnKind, Guess, PeriodPattern};
use crate::meteo::sniff::Joined;
use crate::meteo::source::STATION_NAMES;

/// Whether a column name says it names the station in words (the Bureau of
/// Meteorology's `Bureau of Meteorology station number`): the word `station` followed
/// by `number`, `no`, `id`, `name` or `code` (also written as one word, CoCoRaHS's
/// `StationNumber`); or `sta`, `stn` or `poste` among other words (Météo-France's
/// `numer_sta`, `NUM_POSTE`); or `station` with `id`, `wmo` or `omm` anywhere
/// (Météo-France's SYNOP export `ID OMM station`), unless a companion's (GHCNh's
/// `temperature_Source_Station_ID`).
pub(super) fn names_a_station(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let numbered = words.len() > 1 && words.iter().any(|word| ["sta", "stn", "poste"].contains(word));
    if words.contains(&"source") {
        return false;
    }
    let identified = words.contains(&"station") && words.iter().any(|word| ["id", "wmo", "omm"].contains(word));
    // Written in camel case (CoCoRaHS's `StationNumber`, `StationName`).
    let joined = ["stationnumber", "stationno", "stationid", "stationname", "stationcode"].contains(&lower.as_str());
    numbered
        || joined
        || identified
        || words
            .windows(2)
            .any(|pair| pair[0] == "station" && ["number", "no", "id", "name", "code"].contains(&pair[1]))
}

impl Guess<'_> {
    pub(super) fn station(&mut self, wide: bool) {
        let text = |kind: &ColumnKind| *kind == ColumnKind::Text;
        let station = self
            .find(&STATION_NAMES, |_| true)
            .or_else(|| (0..self.columns.len()).find(|&i| names_a_station(&self.columns[i].name)))
            .or_else(|| (0..self.columns.len()).find(|&i| self.constant_identifier(i)))
            .or_else(|| self.columns.first().is_some_and(|first| text(&first.kind)).then_some(0));
        let station = station
            .filter(|&i| !wide || PeriodPattern::detect(&[self.columns[i].name.clone()]).is_none())
            .or_else(|| self.constant_code());
        if let Some(index) = station {
            let reference = self.take(index);
            self.flag("--station", Some(reference));
        } else if let Some(place) = self.preamble_station() {
            self.flag("--station-from-preamble", Some(place));
        } else {
            self.flag("--station-from-file", None);
        }
    }

    /// A column named as an identifier (a last word `id`: the DWD climate portal's
    /// `SDO_ID` beside its `Produkt_Code`) holding one value in every sampled row, not
    /// a companion's (`…_Source_Station_ID`).
    fn constant_identifier(&self, index: usize) -> bool {
        let lower = self.columns[index].name.to_ascii_lowercase();
        let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
        let named = words.len() > 1 && words.last() == Some(&"id") && !words.contains(&"source");
        let mut values = self.body.iter().map(|row| row.get(index).map(|value| value.trim()));
        let first = values.next().flatten().filter(|value| !value.is_empty());
        named && first.is_some() && self.body.len() >= 2 && values.all(|value| value == first)
    }

    /// Without a header, a first column of one integer in every sampled row, too large
    /// for a year (USCRN's WBAN number `53131`): the station.
    fn constant_code(&self) -> Option<usize> {
        let first = self.columns.first().filter(|column| column.kind == ColumnKind::Integer)?;
        let mut values = self.body.iter().filter_map(|row| row.first());
        let code = values.next()?;
        let constant = self.body.len() >= 2 && values.all(|value| value == code);
        let large = code.parse::<i64>().is_ok_and(|value| value > 9999);
        (!self.sniffed.header && first.reference == "0" && constant && large).then_some(0)
    }

    /// `ROW,COL` of a station in the preamble: under a station-like label of a label
    /// line followed by a value line (`name,lat\nBerlin,52.5`); else in the first line,
    /// the field after a label (`Station: X`, `Station;X`, a logger's `TOA5`) or its
    /// first field. `None` for a label line without a station label.
    fn preamble_station(&self) -> Option<String> {
        // The upper line of a header written on two lines names columns, no station.
        let upper = self.sniffed.names_joined == Joined::WithLineAbove;
        let preamble = &self.sniffed.preamble[..self.sniffed.preamble.len() - usize::from(upper)];
        let first = preamble.iter().position(|fields| fields.iter().any(|f| !f.is_empty()))?;
        let fields = &preamble[first];
        let is_label =
            |field: &String| STATION_NAMES.contains(&field.trim_end_matches(':').to_ascii_lowercase().as_str());
        // Labels differ; a key with one value a column (meteoblue's `location,Basel,Basel`)
        // is read as `Station: X` below.
        let labels = fields.iter().enumerate().all(|(i, field)| !fields[..i].contains(field));
        let values = preamble.get(first + 1).filter(|values| values.len() == fields.len() && fields.len() > 2);
        if let Some(values) = values.filter(|_| labels) {
            let column = fields.iter().position(is_label).filter(|&c| !values[c].is_empty())?;
            return Some(format!("{},{}", first + 2, column + 1));
        }
        // A comment or a banner (`# Coding: utf-8`, CAMS's first line; NASA POWER's
        // `-BEGIN HEADER-`) names no station, nor does a place (PVGIS's `Latitude
        // (decimal degrees): 45.000`).
        let label = crate::meteo::source::without_unit(fields[0].split(':').next().unwrap_or("")).to_ascii_lowercase();
        let banner = fields[0].starts_with(|c: char| !c.is_alphanumeric());
        if banner || (fields[0].contains(':') && PLACE_NAMES.contains(&label.as_str())) {
            return None;
        }
        let labelled = fields.len() > 1
            && (is_label(&fields[0]) || fields[0].ends_with(':') || crate::meteo::sniff::is_logger_line(fields));
        let column = if labelled { 2 } else { 1 };
        // A sentence (an archive's title, a licence) names no station: the file does.
        let field = fields.get(column - 1).map_or("", |field| field.trim());
        if field.is_empty() || field.split_whitespace().count() > 4 || field.len() > 40 {
            return None;
        }
        Some(format!("{},{}", first + 1, column))
    }
}
