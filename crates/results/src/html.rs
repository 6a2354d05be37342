//! The static page `acclab report` writes: one HTML file, its style inline, no script and
//! nothing fetched from elsewhere, its figures beside it (SVG) — a directory a lab can publish
//! as it is.

use std::fmt::Write as _;

use crate::table::{escape, Table};

/// The page's style: readable on screen and in print, tables compact, a check's outcome in
/// colour as well as in words.
const STYLE: &str = "\
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:2em auto;max-width:72em;\
padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.3em;border-bottom:1px solid #ccc;\
margin-top:2em}h3{font-size:1.1em;margin-top:1.5em}\
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}\
th,td{border:1px solid #ddd;padding:.2em .5em;vertical-align:top}th{background:#f3f3f3;text-align:left}\
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\
tr.pass td:last-child{color:#176317;font-weight:bold}\
tr.fail td{background:#fde8e8}tr.fail td:last-child{color:#a40000;font-weight:bold}\
tr.unchecked td{color:#666}\
.verdict{font-weight:bold;padding:.1em .4em;border-radius:.2em}\
.verdict.pass{background:#dcf2dc;color:#176317}.verdict.fail{background:#fde8e8;color:#a40000}\
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:.85em;color:#555}\
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.8em}\
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;font-size:.9em}\
dt{font-weight:bold}dd{margin:0;word-break:break-all}\
nav ul{columns:3;font-size:.9em}.note{font-size:.9em;color:#444}";

/// A page being written: a title, then headings, paragraphs, tables, figures and listings in
/// the order they are added.
pub struct Page {
    title: String,
    body: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        let mut body = String::new();
        let _ = writeln!(body, "<h1>{}</h1>", escape(title));
        Page {
            title: title.into(),
            body,
        }
    }

    /// A heading of `level` (2 for a section, 3 for a part of one) with an anchor `id`.
    pub fn heading(&mut self, level: u8, id: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<h{level} id=\"{}\">{}</h{level}>",
            escape(id),
            escape(text)
        );
    }

    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// A smaller paragraph: a note about what is above it.
    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"note\">{}</p>", escape(text));
    }

    /// An outcome in a coloured box, then `text`: "PASS — 7 of 7 checks".
    pub fn verdict(&mut self, pass: bool, word: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<p><span class=\"verdict {}\">{}</span> {}</p>",
            if pass { "pass" } else { "fail" },
            escape(word),
            escape(text)
        );
    }

    /// A table's header and its first `max_rows` rows.
    pub fn table(&mut self, table: &Table, max_rows: usize) {
        self.body.push_str(&table.html(max_rows));
    }

    /// A figure: the image at `src` (relative to the page) with its caption.
    pub fn figure(&mut self, src: &str, caption: &str) {
        let _ = writeln!(
            self.body,
            "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
            escape(src),
            escape(caption),
            escape(caption)
        );
    }

    /// Text shown as it is (a scenario file, a command line).
    pub fn listing(&mut self, text: &str) {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
    }

    /// A long text shown as it is, folded under `summary` until opened.
    pub fn listing_folded(&mut self, summary: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            escape(summary),
            escape(text)
        );
    }

    /// Names and values, one pair a line.
    pub fn pairs<K: AsRef<str>, V: AsRef<str>>(&mut self, pairs: impl IntoIterator<Item = (K, V)>) {
        self.body.push_str("<dl>");
        for (k, v) in pairs {
            let _ = write!(
                self.body,
                "<dt>{}</dt><dd>{}</dd>",
                escape(k.as_ref()),
                escape(v.as_ref())
            );
        }
        self.body.push_str("</dl>\n");
    }

    /// Links to the page's sections: (anchor, text) each.
    pub fn contents<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        entries: impl IntoIterator<Item = (K, V)>,
    ) {
        self.body.push_str("<nav><ul>");
        for (id, text) in entries {
            let _ = write!(
                self.body,
                "<li><a href=\"#{}\">{}</a></li>",
                escape(id.as_ref()),
                escape(text.as_ref())
            );
        }
        self.body.push_str("</ul></nav>\n");
    }

    /// The whole document.
    pub fn finish(self, generator: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n\
             <style>{STYLE}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
            escape(generator),
            escape(&self.title),
            self.body
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_escapes_what_it_is_given() {
        let mut p = Page::new("a <b> & c");
        p.heading(2, "s1", "x<y");
        p.figure("figures/a b.svg", "\"q\"");
        p.pairs([("k", "v&")]);
        let html = p.finish("acclab 0.1.0");
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>a &lt;b&gt; &amp; c</title>"));
        assert!(html.contains("<h2 id=\"s1\">x&lt;y</h2>"));
        assert!(html.contains("<img src=\"figures/a b.svg\" alt=\"&quot;q&quot;\">"));
        assert!(html.contains("<dt>k</dt><dd>v&amp;</dd>"));
        assert!(!html.contains("<script"));
    }
}
