//! Errors in scenario text: the key path and the line it is on. Lines are found only when there
//! is an error, by looking the key path up in the parsed document.

use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::ScenarioError;
use crate::spec::{join_key, key_segments};

/// An error at `key` of scenario text, on the line the key path leads to.
pub(crate) fn located_error(src: &str, file: &str, key: String, message: String) -> ScenarioError {
    located(src, file, None, key, message)
}

/// An error at `key`, on the line of `span` if known, else on the line the key path leads to.
pub(super) fn located(
    src: &str,
    file: &str,
    span: Option<Range<usize>>,
    key: String,
    message: String,
) -> ScenarioError {
    let span = span.or_else(|| {
        let (doc, _) = DeTable::parse_recoverable(src);
        locate(doc.get_ref(), &key).or(Some(doc.span()))
    });
    ScenarioError {
        file: file.to_string(),
        line: span.map(|s| line_of(src, s.start)),
        key,
        message,
    }
}

/// A serde error: the key path it happened at (plus the missing field, for "missing field").
pub(super) fn serde_error(
    e: serde_path_to_error::Error<toml::de::Error>,
    src: &str,
    file: &str,
    span: Option<Range<usize>>,
) -> ScenarioError {
    let message = e.inner().message().trim().to_string();
    let key = match e.path().to_string() {
        p if p == "." => String::new(),
        p => p,
    };
    let key = quote_generated_link(&with_missing_field(&key, &message));
    if src.is_empty() {
        return ScenarioError {
            file: file.to_string(),
            line: None,
            key,
            message,
        };
    }
    located(src, file, span, key, message)
}

/// serde's path through `[topology.links."a->b"]` names the link bare (`topology.links.a->b.x`);
/// quoted, as every other key path names a link. (A generated link's name has no dots.)
fn quote_generated_link(key: &str) -> String {
    let Some(rest) = key.strip_prefix("topology.links.") else {
        return key.to_string();
    };
    let (name, tail) = rest.split_once('.').unwrap_or((rest, ""));
    join_key(
        &format!("topology.links.{}", crate::spec::quote_key(name)),
        tail,
    )
}

/// `key`, or for a "missing field `x`" message the key of the missing field, `key.x`.
pub(super) fn with_missing_field(key: &str, message: &str) -> String {
    match message
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next())
    {
        Some(field) => join_key(key, field),
        None => key.to_string(),
    }
}

/// A TOML syntax error: the key is the table the error is in, plus the key being written on the
/// offending line, if any (e.g. `link[1].rate` for a duplicate `rate`, `output` for a duplicate
/// `[output]`).
pub(super) fn syntax_error(src: &str, file: &str, e: &toml::de::Error) -> ScenarioError {
    let at = e.span().map_or(src.len(), |s| s.start.min(src.len()));
    let line = line_of(src, at);
    let column = at - src[..at].rfind('\n').map_or(0, |n| n + 1);
    ScenarioError {
        file: file.to_string(),
        line: Some(line),
        key: key_at(src, line, column),
        message: e.message().trim().to_string(),
    }
}

/// 1-based line of byte `offset`.
fn line_of(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    src.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The key path at byte `column` of `line` of a TOML file: the enclosing table header (with the
/// index of an array of tables), then the key written there — inside inline tables and arrays
/// on the line (`queue.limit`, `classes[1].name`) or, failing that, the line's first key.
fn key_at(src: &str, line: usize, column: usize) -> String {
    let mut table = String::new();
    let mut arrays: std::collections::BTreeMap<String, usize> = Default::default();
    for (n, text) in src.lines().enumerate() {
        let t = text.trim();
        let header = t
            .strip_prefix("[[")
            .and_then(|r| r.split("]]").next())
            .map(|h| (h.trim().to_string(), true))
            .or_else(|| {
                t.strip_prefix('[')
                    .and_then(|r| r.split(']').next())
                    .map(|h| (h.trim().to_string(), false))
            });
        if let Some((name, array)) = header {
            table = match array {
                true => {
                    let k = arrays
                        .entry(name.clone())
                        .and_modify(|k| *k += 1)
                        .or_insert(0);
                    format!("{name}[{k}]")
                }
                false => name,
            };
            if n + 1 == line {
                return table;
            }
            continue;
        }
        if n + 1 == line {
            // The key the line starts with (before its `=`, or where the `=` should be).
            let first: String = t
                .chars()
                .take_while(|&c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                .collect();
            let key = inline_key(text, column).or(Some(first).filter(|k| !k.is_empty()));
            return match (table.is_empty(), key) {
                (true, Some(k)) => k,
                (false, Some(k)) => format!("{table}.{k}"),
                (false, None) => table,
                (true, None) => String::new(),
            };
        }
    }
    table
}

/// The key path, inside the line's own inline tables and arrays, of the key that starts at or
/// spans byte `column` of `text` (`queue.limit` for the second `limit` of
/// `queue = { limit = 1, limit = 2 }`); `None` when no key is there.
fn inline_key(text: &str, column: usize) -> Option<String> {
    // Each open `{` or `[` on the line: the key path of its value, and an array's element index.
    let mut open: Vec<(String, Option<usize>)> = Vec::new();
    let mut pending = String::new(); // the last key written before an `=`
    let value_path = |open: &[(String, Option<usize>)], pending: &str| match open.last() {
        Some((p, Some(i))) => format!("{p}[{i}]"),
        Some((p, None)) => join_key(p, pending),
        None => pending.to_string(),
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' | b'\'' => {
                // A string, or a quoted key: skip to its end.
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    i += if c == b'"' && bytes[i] == b'\\' { 2 } else { 1 };
                }
                if start <= column && column <= i {
                    return None;
                }
            }
            b'{' | b'[' => {
                let path = value_path(&open, &pending);
                open.push((path, (c == b'[').then_some(0)));
            }
            b'}' | b']' => {
                open.pop();
            }
            b',' => {
                if let Some((_, Some(k))) = open.last_mut() {
                    *k += 1;
                }
            }
            b'#' => return None,
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || b"_-.".contains(&bytes[i]))
                {
                    i += 1;
                }
                let token = &text[start..i];
                let is_key = text[i..].trim_start().starts_with('=');
                if is_key {
                    if (start..i.max(start + 1)).contains(&column) {
                        let table = match open.last() {
                            Some((p, Some(k))) => format!("{p}[{k}]"),
                            Some((p, None)) => p.clone(),
                            None => String::new(),
                        };
                        return Some(join_key(&table, token));
                    }
                    pending = token.to_string();
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The key path and span of the first TOML date-time in `table` (under `prefix`): no key of a
/// scenario takes one, and serde would otherwise read it as the text of a string key.
pub(super) fn first_datetime(table: &DeTable, prefix: &str) -> Option<(String, Range<usize>)> {
    fn walk(v: &Spanned<DeValue>, key: String) -> Option<(String, Range<usize>)> {
        match v.get_ref() {
            DeValue::Datetime(_) => Some((key, v.span())),
            DeValue::Table(t) => first_datetime(t, &key),
            DeValue::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, v)| walk(v, format!("{key}[{i}]"))),
            _ => None,
        }
    }
    table
        .iter()
        .find_map(|(k, v)| walk(v, join_key(prefix, &crate::spec::quote_key(k.get_ref()))))
}

/// The line of the value at the key path given as `segments` (each a key as written, quotes
/// and dots inside it kept: `["sweep", "set", "link.\"a->b\".rate"]`).
pub(crate) fn line_of_key(src: &str, segments: &[&str]) -> Option<usize> {
    let doc = DeTable::parse(src).ok()?;
    let (first, rest) = segments.split_first()?;
    let mut at = doc.get_ref().iter().find(|(k, _)| k.get_ref() == first)?.1;
    for seg in rest {
        let DeValue::Table(t) = at.get_ref() else {
            return None;
        };
        at = t.iter().find(|(k, _)| k.get_ref() == seg)?.1;
    }
    Some(line_of(src, at.span().start))
}

/// The span of the value at `key` (`flow[2].params.weight`) in `doc`, or of the deepest table
/// on the way that exists.
fn locate(doc: &DeTable, key: &str) -> Option<Range<usize>> {
    let mut segments = key_segments(key).into_iter();
    let first = segments.next()?;
    let mut at: &Spanned<DeValue> = doc.iter().find(|(k, _)| k.get_ref() == &first)?.1;
    let mut span = at.span();
    for seg in segments {
        let next = match (at.get_ref(), seg.parse::<usize>()) {
            (DeValue::Array(a), Ok(i)) => a.get(i),
            (DeValue::Table(t), _) => t.iter().find(|(k, _)| k.get_ref() == &seg).map(|(_, v)| v),
            _ => None,
        };
        match next {
            Some(v) => {
                at = v;
                span = v.span();
            }
            None => break,
        }
    }
    Some(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_of_a_line() {
        let src = "name = \"x\"\n[[link]]\nrate = 1\n[[link]]\nrate = 2\n[output]\nwindow = 3\n";
        assert_eq!(key_at(src, 1, 0), "name");
        assert_eq!(key_at(src, 3, 0), "link[0].rate");
        assert_eq!(key_at(src, 4, 0), "link[1]");
        assert_eq!(key_at(src, 5, 0), "link[1].rate");
        assert_eq!(key_at(src, 7, 0), "output.window");
        // Inside inline tables and arrays of them (issue 55 §6: a duplicate key there was
        // reported as its table's).
        let src = "[[link]]\nqueue = { kind = \"red\", limit = 1, limit = 2 }\n\
                   q = { classes = [{ name = \"a\" }, { c = 1, name = \"b\" }] }\n";
        let col = |line: &str, pat: &str| line.rfind(pat).unwrap();
        let l2 = src.lines().nth(1).unwrap();
        assert_eq!(key_at(src, 2, col(l2, "limit")), "link[0].queue.limit");
        assert_eq!(key_at(src, 2, 0), "link[0].queue");
        let l3 = src.lines().nth(2).unwrap();
        assert_eq!(key_at(src, 3, col(l3, "name")), "link[0].q.classes[1].name");
    }
}
