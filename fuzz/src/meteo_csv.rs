//! Fuzz target `csv`: the meteorological CSV reader and load pipeline of
//! `quiredb-datasets` (`ObservationReader` → `load` → a sink that encodes records).
//!
//! Input layout: byte 0 chooses the schema ([`schema`]: the presets, the default, and
//! variants with other delimiters, header modes, numbered columns and missing markers),
//! byte 1 the load options (bit 0: skip bad rows, bits 1–3: batch size), the rest is
//! the CSV text. Properties checked — a violation panics: nothing panics; a good row
//! has one finite-or-missing value per schema measure; the queue's record encoding
//! round-trips every raw record, and packing from the fields gives the same bytes as
//! packing the joined record.
//!
//! [`mutate`] edits lines and fields (interesting values, short and long rows, quotes,
//! delimiters, BOM, CRLF). Read next: `db.rs`.

use std::io::Cursor;

use quiredb_datasets::meteo::record::{RecordEncoding, pack};
use quiredb_datasets::meteo::{
    ColumnRef, Delimiter, GeneratorConfig, HeaderMode, LoadOptions, MissingValues, Observation, ObservationGenerator,
    ObservationReader, ObservationSink, RawRow, Schema, StationSpec, TimeSpec, generator, load,
};

use crate::rng::Rng;

/// Number of schemas byte 0 chooses from.
pub const SCHEMAS: usize = 14;

/// Field values on the parsers' boundaries, for the mutators.
pub const DICTIONARY: &[&[u8]] = &[
    b"NA",
    b"N/A",
    b"nan",
    b"NULL",
    b"",
    b" ",
    b"-999",
    b"-9999.0",
    b"-99999",
    b"1e308",
    b"1e309",
    b"-1e-400",
    b"inf",
    b"-0",
    b"+1",
    b"0.1234567890123456",
    b"12345678901234567",
    b"9999999999999999999",
    b"-9223372036854775808",
    b"1,5",
    b"1.2.3",
    b".",
    b"-",
    b"2013-02-29",
    b"2012-02-29T23:59:60",
    b"2013/03/01 01:00",
    b"2013-03/01",
    b"9999-12-31T23:59:59+99:99",
    b"-999-01-01",
    b"0000-00-00",
    b"2013-03-01T24:00",
    b"2013-03-01T00:00:00.999999Z",
    b"2013-03-01T00:00-0530",
    b"1362096000",
    b"-1362096000",
    b"\"",
    b"\"\"",
    b"\"a,b\"",
    b"\"x\ny\"",
    b"\r\n",
    b"\n",
    b",",
    b";",
    b"\t",
    b"\xEF\xBB\xBF",
    b"\xFF\xFE",
    b"\xC3\x28",
    b"station",
    b"time",
    b"TEMP",
    b"year",
    b"hour",
];

/// Runs one input (see the module docs for the layout and the checks).
pub fn run(input: &[u8]) {
    let schema_byte = input.first().copied().unwrap_or(0);
    let options_byte = input.get(1).copied().unwrap_or(0);
    let csv = input.get(2..).unwrap_or_default();
    let schema = schema(schema_byte);
    let Ok(mut reader) = ObservationReader::new(Cursor::new(csv), &schema) else { return };
    let skip_bad = options_byte & 1 == 1;
    let batch_rows = match (options_byte >> 1) & 7 {
        0 => None,
        n => Some(u64::from(n)),
    };
    let report: Option<Box<dyn std::io::Write>> = skip_bad.then(|| Box::new(std::io::sink()) as _);
    let options = LoadOptions { skip_bad, batch_rows, skip_report: report };
    let mut sink =
        CheckingSink { measures: schema.measures.len(), delimiter: reader.delimiter(), ..Default::default() };
    if let Ok(summary) = load(&mut reader, &mut sink, options, &mut |_, _| {}) {
        assert_eq!(summary.rows, sink.rows, "the summary counts other rows than the sink received");
        let _ = summary.to_string();
    }
}

/// The schema byte 0 names (taken modulo [`SCHEMAS`]).
pub fn schema(byte: u8) -> Schema {
    let preset = |name| Schema::preset(name).expect("a preset from PRESET_NAMES");
    let index = |columns: &[usize]| columns.iter().map(|&column| ColumnRef::Index(column)).collect::<Vec<_>>();
    let delimited = |delimiter: u8| Schema { delimiter: Delimiter::Byte(delimiter), ..Schema::default() };
    match usize::from(byte) % SCHEMAS {
        0 => Schema::default(),
        1 => preset("beijing"),
        2 => preset("nycflights13"),
        3 => preset("vega-seattle"),
        4 => preset("vega-sf-hourly"),
        5 => Schema { header: HeaderMode::Present, ..delimited(b';') },
        6 => Schema { header: HeaderMode::Absent, ..delimited(b'\t') },
        7 => Schema {
            header: HeaderMode::Absent,
            station: StationSpec::Constant("fuzz".into()),
            time: TimeSpec::Parts {
                year: ColumnRef::Index(0),
                month: ColumnRef::Index(1),
                day: ColumnRef::Index(2),
                hour: None,
            },
            measures: index(&[3, 3, 0]),
            ..Schema::default()
        },
        8 => Schema {
            missing: MissingValues {
                tokens: vec!["-".into(), "x".into()],
                sentinels: Vec::new(),
                words: vec![("T".into(), 0.0)],
                suffix_flags: "s*#".into(),
                dropped_suffix_flags: "s".into(),
            },
            ..Schema::default()
        },
        9 => Schema {
            station: StationSpec::Column(ColumnRef::Name("station".into())),
            time: TimeSpec::Timestamp(ColumnRef::Name("time".into())),
            measures: ["temp", "PRES", "dewp"].iter().map(|name| ColumnRef::Name((*name).into())).collect(),
            ..Schema::default()
        },
        10 => delimited(b'"'),
        11 => delimited(b'\n'),
        12 => delimited(b' '),
        _ => delimited(0xFF),
    }
}

/// A sink that checks each good row and its record encodings.
#[derive(Default)]
struct CheckingSink {
    measures: usize,
    delimiter: u8,
    rows: u64,
    packed: Vec<u8>,
    repacked: Vec<u8>,
    decoded: Vec<u8>,
}

impl ObservationSink for CheckingSink {
    fn push(&mut self, observation: &Observation, raw: &[u8]) -> quiredb_datasets::Result<()> {
        self.check_observation(observation);
        self.packed.clear();
        pack(raw, &mut self.packed);
        self.check_round_trip(raw);
        Ok(())
    }

    fn push_row(&mut self, observation: &Observation, raw: &mut RawRow<'_>) -> quiredb_datasets::Result<()> {
        self.check_observation(observation);
        self.packed.clear();
        raw.encode(RecordEncoding::Nibble, &mut self.packed);
        let joined = raw.bytes();
        self.repacked.clear();
        pack(joined, &mut self.repacked);
        assert_eq!(self.packed, self.repacked, "packing from the fields differs from packing {joined:?}");
        self.check_round_trip(joined);
        Ok(())
    }

    fn finish(&mut self) -> quiredb_datasets::Result<()> {
        Ok(())
    }
}

impl CheckingSink {
    fn check_observation(&mut self, observation: &Observation) {
        self.rows += 1;
        assert_eq!(observation.measures.len(), self.measures, "a row with another number of measures");
        for value in observation.measures.iter().flatten() {
            assert!(value.is_finite(), "a measure {value} that is not finite");
        }
        assert!(!observation.station.is_empty(), "a good row without a station");
    }

    fn check_round_trip(&mut self, raw: &[u8]) {
        RecordEncoding::Nibble.decode(&self.packed, &mut self.decoded).expect("a packed record decodes");
        assert_eq!(self.decoded, raw, "the nibble encoding does not round-trip (delimiter {:?})", self.delimiter);
    }
}

/// Built-in seed inputs: generated rows in the default schema and the shapes of the
/// real files (the committed corpus holds cuts of the real files themselves).
pub fn seeds() -> Vec<Vec<u8>> {
    let mut generated = Vec::new();
    let mut observation = Observation::default();
    let mut rows = ObservationGenerator::new(GeneratorConfig { stations: Some(2), ..GeneratorConfig::new(40) })
        .expect("the default calibration loads");
    generated.extend_from_slice(generator::header_line().as_bytes());
    while rows.next_into(&mut observation) {
        generator::write_row(&observation, &mut generated);
    }
    let texts: [(u8, &[u8]); 8] = [
        (0, b"station,time,temp,pres,dewp,rain,wspm\nA,2013-03-01T00:00,1.5,1020,-3,0,2.1\n"),
        (1, b"No,year,month,day,hour,PM2.5,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,wd,WSPM,station\n1,2013,3,1,0,4,4,4,7,300,77,-0.7,1023,-18.8,0,NNW,4.4,Aotizhongxin\n2,2013,3,1,1,8,8,4,7,300,77,-1.1,1023.2,-18.2,0,N,4.7,Aotizhongxin\n"),
        (2, b"origin,year,month,day,hour,temp,dewp,humid,wind_dir,wind_speed,wind_gust,precip,pressure,visib,time_hour\nEWR,2013,1,1,1,39.02,26.06,59.37,270,10.35702,NA,0,1012,10,2013-01-01T06:00:00Z\n"),
        (3, b"date,precipitation,temp_max,temp_min,wind,weather\n2012-01-01,0.0,12.8,5.0,4.7,drizzle\n2012-01-02,10.9,10.6,2.8,4.5,rain\n"),
        (4, b"temp,date\n47.8,2010-01-01 00:00:00\n47.4,2010-01-01 01:00:00\n"),
        (5, b"\xEF\xBB\xBFstation;time;temp;pres;dewp;rain;wspm\r\nA;2013-03-01 00:00;1,5;1020;-3;0;2,1\r\n"),
        (7, b"2013,2,28,1.5\n2012,2,29,NA\n"),
        (9, b"\"station\",\"time\",\"temp\",\"pres\",\"dewp\"\n\"A,1\",1362096000,\"1\n\",2,3\n"),
    ];
    let mut seeds = vec![[&[0, 0][..], &generated].concat(), [&[0, 3][..], &generated].concat()];
    seeds.extend(texts.iter().map(|(schema, text)| [&[*schema, 1][..], text].concat()));
    seeds
}

/// One structure-aware mutation of `input`: schema and option bytes, lines, fields.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    while input.len() < 2 {
        input.push(0);
    }
    match rng.below(10) {
        0 => input[0] = rng.byte(),
        1 => input[1] = rng.byte(),
        2..=3 => edit_field(rng, input),
        4 => edit_line(rng, input),
        5 => {
            let delimiter = *rng.pick(b",;\t|\"");
            let from = *rng.pick(b",;\t");
            for byte in &mut input[2..] {
                if *byte == from {
                    *byte = delimiter;
                }
            }
        }
        6 => {
            let crlf: Vec<u8> =
                input[2..].iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect();
            input.truncate(2);
            input.extend(crlf);
        }
        _ => {
            edit_field(rng, input);
            edit_field(rng, input);
        }
    }
}

/// Line boundaries `(start, end)` of the CSV part (after the two option bytes).
fn lines(input: &[u8]) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 2;
    for (at, &byte) in input.iter().enumerate().skip(2) {
        if byte == b'\n' {
            lines.push((start, at));
            start = at + 1;
        }
    }
    if start < input.len() {
        lines.push((start, input.len()));
    }
    lines
}

fn edit_line(rng: &mut Rng, input: &mut Vec<u8>) {
    let lines = lines(input);
    if lines.is_empty() {
        return;
    }
    let (start, end) = *rng.pick(&lines);
    let line = input[start..end].to_vec();
    match rng.below(4) {
        0 => drop(input.drain(start..(end + 1).min(input.len()))),
        1 => {
            let copies = rng.small_len(100);
            let block: Vec<u8> = (0..copies).flat_map(|_| line.iter().copied().chain([b'\n'])).collect();
            input.splice(start..start, block);
        }
        2 => input.splice(end..end, [b'\n']).for_each(drop),
        _ => {
            let (other_start, other_end) = *rng.pick(&lines);
            let other = input[other_start..other_end].to_vec();
            input.splice(start..end, other);
        }
    }
}

fn edit_field(rng: &mut Rng, input: &mut Vec<u8>) {
    let lines = lines(input);
    if lines.is_empty() {
        input.extend_from_slice(rng.pick::<&[u8]>(DICTIONARY));
        return;
    }
    let (start, end) = *rng.pick(&lines);
    let mut bounds = vec![start];
    bounds.extend((start..end).filter(|&at| matches!(input[at], b',' | b';' | b'\t')).map(|at| at + 1));
    let field_start = *rng.pick(&bounds);
    let field_end = (field_start..end).find(|&at| matches!(input[at], b',' | b';' | b'\t')).unwrap_or(end);
    match rng.below(4) {
        0 => drop(input.drain(field_start..(field_end + 1).min(end))),
        1 => input.splice(field_end..field_end, [b',']).for_each(drop),
        _ => input.splice(field_start..field_end, rng.pick(DICTIONARY).iter().copied()).for_each(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seeds load, and a few thousand mutations of them run clean.
    #[test]
    fn seeds_and_mutations_run_clean() {
        let seeds = seeds();
        for seed in &seeds {
            run(seed);
        }
        let mut rng = Rng::new(9);
        for _ in 0..3000 {
            let mut input = rng.pick(&seeds).clone();
            for _ in 0..rng.between(1, 4) {
                mutate(&mut rng, &mut input);
            }
            run(&input);
        }
    }
}
