//! Tables of results, drawn once and shown two ways: as aligned text on the terminal and as an
//! HTML table in `acclab report`'s page, so that the two never say different things.

use std::fmt::Write as _;

/// How a column's cells line up: names to the left, numbers to the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What a row says about its check, shown by the page's colours (the text says it in words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Pass,
    Fail,
    /// Reported, not checked: information, or left to the full run.
    Unchecked,
}

impl Mark {
    fn class(self) -> &'static str {
        match self {
            Mark::Pass => "pass",
            Mark::Fail => "fail",
            Mark::Unchecked => "unchecked",
        }
    }
}

/// A header and rows of cells, already formatted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    columns: Vec<(String, Align)>,
    rows: Vec<(Vec<String>, Option<Mark>)>,
}

impl Table {
    /// A table with these columns; the first is left-aligned, the others right-aligned, unless
    /// [`Table::align`] says otherwise.
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = S>) -> Table {
        let columns = columns
            .into_iter()
            .enumerate()
            .map(|(i, c)| (c.into(), if i == 0 { Align::Left } else { Align::Right }))
            .collect();
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// Column `i` aligned as `align`.
    pub fn align(mut self, i: usize, align: Align) -> Table {
        self.columns[i].1 = align;
        self
    }

    /// Appends a row; it must have a cell per column.
    pub fn push(&mut self, cells: Vec<String>) {
        self.push_marked(cells, None);
    }

    /// Appends a row with what it says about its check.
    pub fn push_marked(&mut self, cells: Vec<String>, mark: Option<Mark>) {
        assert_eq!(
            cells.len(),
            self.columns.len(),
            "a row of {} cells in a table of {} columns",
            cells.len(),
            self.columns.len()
        );
        self.rows.push((cells, mark));
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header and the first `max_rows` rows as text, each column as wide as its widest
    /// cell, two spaces between columns, no trailing spaces.
    pub fn text(&self, max_rows: usize) -> String {
        let rows = &self.rows[..self.rows.len().min(max_rows)];
        let width = |i: usize| {
            rows.iter()
                .map(|(cells, _)| cells[i].chars().count())
                .chain(std::iter::once(self.columns[i].0.chars().count()))
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.columns.len()).map(width).collect();
        let mut s = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut l = String::new();
            for (i, c) in cells.enumerate() {
                if i > 0 {
                    l.push_str("  ");
                }
                let w = widths[i];
                let _ = match self.columns[i].1 {
                    Align::Left => write!(l, "{c:<w$}"),
                    Align::Right => write!(l, "{c:>w$}"),
                };
            }
            s.push_str(l.trim_end());
            s.push('\n');
        };
        line(&mut self.columns.iter().map(|c| c.0.as_str()));
        for (cells, _) in rows {
            line(&mut cells.iter().map(String::as_str));
        }
        s
    }

    /// The header and the first `max_rows` rows as HTML: a `<table>` with numbers
    /// right-aligned, a checked row's outcome as its class (`pass`, `fail`, `unchecked`), every
    /// cell escaped.
    pub fn html(&self, max_rows: usize) -> String {
        let align = |a: Align| match a {
            Align::Left => "",
            Align::Right => " class=\"num\"",
        };
        let mut s = String::from("<table>\n<thead><tr>");
        for (name, a) in &self.columns {
            let _ = write!(s, "<th{}>{}</th>", align(*a), escape(name));
        }
        s.push_str("</tr></thead>\n<tbody>\n");
        for (cells, mark) in self.rows.iter().take(max_rows) {
            match mark {
                Some(m) => {
                    let _ = write!(s, "<tr class=\"{}\">", m.class());
                }
                None => s.push_str("<tr>"),
            }
            for (c, (_, a)) in cells.iter().zip(&self.columns) {
                let _ = write!(s, "<td{}>{}</td>", align(*a), escape(c));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody>\n</table>\n");
        s
    }
}

/// `text` with HTML's special characters escaped, for an element's content or a quoted
/// attribute.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["flow", "goodput Mb/s", "result"]).align(2, Align::Left);
        t.push(vec!["a".into(), "12.5".into(), "pass".into()]);
        t.push_marked(
            vec!["long-name".into(), "3".into(), "FAIL".into()],
            Some(Mark::Fail),
        );
        t
    }

    #[test]
    fn text_aligns_names_left_and_numbers_right() {
        assert_eq!(
            sample().text(usize::MAX),
            "flow       goodput Mb/s  result\n\
             a                  12.5  pass\n\
             long-name             3  FAIL\n"
        );
        assert_eq!(sample().text(1).lines().count(), 2);
    }

    #[test]
    fn html_escapes_and_marks_rows() {
        let mut t = sample();
        t.push(vec!["<r1->r2>".into(), "&".into(), "\"x\"".into()]);
        let h = t.html(usize::MAX);
        assert_eq!(t.html(1).matches("<tr").count(), 2);
        assert!(h.contains("<th class=\"num\">goodput Mb/s</th>"));
        assert!(h.contains("<tr class=\"fail\"><td>long-name</td>"));
        assert!(h.contains(
            "<td>&lt;r1-&gt;r2&gt;</td><td class=\"num\">&amp;</td><td>&quot;x&quot;</td>"
        ));
        assert!(!h.contains("<r1"));
    }

    #[test]
    #[should_panic(expected = "a row of 1 cells in a table of 3 columns")]
    fn rows_must_fill_the_columns() {
        sample().push(vec!["a".into()]);
    }
}
