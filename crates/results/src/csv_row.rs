//! CSV rows built in one reused byte buffer, for the files a run writes row by row
//! (`flows.csv`, `links.csv`, `delays.csv`): a million rows are a quarter of a large run's work
//! when each cell is a `String` of its own and the csv crate scans every cell for quoting.
//!
//! The bytes are those the csv crate's default writer gives for the cells' `Display` text, so
//! files do not change with the writer: numbers as `Display` prints them ([`put_f64`]), text
//! quoted only where it holds a comma, a quote or a line break, quotes doubled (the csv crate's
//! `QuoteStyle::Necessary`). Rows end in `\n`.

use std::io::Write;

/// What can be a cell of a row.
pub trait Cell {
    /// Appends the cell's text, quoted where CSV needs it.
    fn put(&self, out: &mut Vec<u8>);
}

macro_rules! integer_cells {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(itoa::Buffer::new().format(*self).as_bytes());
            }
        }
    )*};
}
integer_cells!(u64, u32);

impl Cell for f64 {
    fn put(&self, out: &mut Vec<u8>) {
        put_f64(*self, out);
    }
}

/// An empty cell for `None`.
impl<T: Cell> Cell for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        if let Some(v) = self {
            v.put(out);
        }
    }
}

impl Cell for str {
    fn put(&self, out: &mut Vec<u8>) {
        let b = self.as_bytes();
        if !b.iter().any(|&c| matches!(c, b',' | b'"' | b'\r' | b'\n')) {
            out.extend_from_slice(b);
            return;
        }
        out.push(b'"');
        for &c in b {
            if c == b'"' {
                out.push(b'"');
            }
            out.push(c);
        }
        out.push(b'"');
    }
}

impl Cell for String {
    fn put(&self, out: &mut Vec<u8>) {
        self.as_str().put(out);
    }
}

/// `x` as `format!("{x}")` writes it (the shortest digits that read back as `x`, never an
/// exponent): whole numbers below 2^53 — rates in bit/s, byte counts — by their integer's
/// digits, which are those digits (a neighbour of a whole number below 2^53 is a whole number
/// 1 away, so no fewer digits read back as it); others by `Display`, into the row's buffer.
pub fn put_f64(x: f64, out: &mut Vec<u8>) {
    if x.fract() == 0.0 && x.abs() < (1u64 << 53) as f64 {
        if x.is_sign_negative() {
            out.push(b'-'); // -0 too, as Display writes it
        }
        out.extend_from_slice(itoa::Buffer::new().format(x.abs() as u64).as_bytes());
    } else {
        let _ = write!(out, "{x}"); // a Vec takes every byte
    }
}

/// Text already formatted as a cell's (a number's digits, written once for many rows), put as
/// it is: it must not need quoting.
#[derive(Clone, Copy, Debug)]
pub struct Formatted<'a>(pub &'a [u8]);

impl Cell for Formatted<'_> {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0);
    }
}

/// A CSV file created (truncated) at `path`, buffered, its header written.
pub fn open_csv(
    path: &std::path::Path,
    header: &[impl AsRef<str>],
) -> std::io::Result<std::io::BufWriter<std::fs::File>> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(path)?);
    Row::default()
        .cells(header.iter().map(AsRef::as_ref))
        .end(&mut w)?;
    Ok(w)
}

/// One row being built, then written whole.
#[derive(Debug, Default)]
pub struct Row {
    bytes: Vec<u8>,
    cells: usize,
}

impl Row {
    /// Appends a cell.
    pub fn cell<C: Cell + ?Sized>(&mut self, c: &C) -> &mut Row {
        if self.cells > 0 {
            self.bytes.push(b',');
        }
        c.put(&mut self.bytes);
        self.cells += 1;
        self
    }

    /// Appends a cell per item.
    pub fn cells<'a, C: Cell + ?Sized + 'a>(
        &mut self,
        cs: impl IntoIterator<Item = &'a C>,
    ) -> &mut Row {
        for c in cs {
            self.cell(c);
        }
        self
    }

    /// Writes the row with its line end to `out` and empties it for the next.
    pub fn end(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if self.cells == 1 && self.bytes.is_empty() {
            // A row of one empty cell, which would read as no row at all (as the csv crate
            // writes it).
            self.bytes.extend_from_slice(b"\"\"");
        }
        self.bytes.push(b'\n');
        let written = out.write_all(&self.bytes);
        self.clear();
        written
    }

    /// Empties the row without writing it.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.cells = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f64_text(x: f64) -> String {
        let mut out = Vec::new();
        put_f64(x, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_read_as_display_writes_them() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -2.0,
            0.5,
            0.1,
            1e-5,
            1e-6,
            1e-7,
            1.5e-7,
            123456.789,
            1e15,
            1e16,
            1e17,
            1.2345e20,
            9007199254740993.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            9007199254740992.0,
            9007199254740994.0,
            9007199254740991.0,
            -9007199254740991.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.024910898,
            480000.0,
        ] {
            assert_eq!(f64_text(x), format!("{x}"), "{x:e}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Every bit pattern (mostly far from 1), numbers of the sizes a run's files hold
        /// (rates, seconds, fractions), and whole numbers on either side of 2^53.
        #[test]
        fn any_float_reads_as_display_writes_it(
            bits in any::<u64>(),
            near in -1e13..1e13f64,
            ratio in (any::<u32>(), 1..1_000_000_000u64),
            whole in any::<u64>(),
            shift in 0..20u32,
        ) {
            let whole = (whole >> shift) as f64; // 2^44 to 2^64, and all sizes below
            for x in [f64::from_bits(bits), near, ratio.0 as f64 / ratio.1 as f64, whole, -whole, near.trunc()] {
                prop_assert_eq!(f64_text(x), format!("{}", x));
            }
        }

        #[test]
        fn any_integer_reads_as_display_writes_it(x in any::<u64>()) {
            let mut out = Vec::new();
            x.put(&mut out);
            prop_assert_eq!(String::from_utf8(out).unwrap(), x.to_string());
        }

        /// Any row of text cells, byte for byte as the csv crate writes it.
        #[test]
        fn rows_are_the_csv_crates(cells in proptest::collection::vec("[a-z,\"\r\n ]{0,6}", 1..5)) {
            let mut ours = Vec::new();
            let mut row = Row::default();
            row.cells(cells.iter().map(String::as_str)).end(&mut ours).unwrap();
            let mut theirs = csv::Writer::from_writer(Vec::new());
            theirs.write_record(&cells).unwrap();
            prop_assert_eq!(ours, theirs.into_inner().unwrap());
        }
    }
}
