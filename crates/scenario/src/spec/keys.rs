//! Key paths as patches and errors write them: `link."r1->r2".queue.classes[1].f_max`.

/// `k` as a TOML key: bare when it can be, quoted otherwise (`"r1->r2"`).
pub fn quote_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// `head.key`, or `head` alone, or `head[1]` when `key` is an index.
pub fn join_key(head: &str, key: &str) -> String {
    match key {
        "" => head.to_string(),
        k if head.is_empty() => k.to_string(),
        k if k.starts_with('[') => format!("{head}{k}"),
        k => format!("{head}.{k}"),
    }
}

/// `a.b[2]."c->d"` → `["a", "b", "2", "c->d"]`.
pub fn key_segments(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '.' | '[' | ']' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_paths_split_into_segments() {
        assert_eq!(
            key_segments(r#"link[0].queue.classes[1].f_max"#),
            ["link", "0", "queue", "classes", "1", "f_max"]
        );
        assert_eq!(
            key_segments(r#"link."r1->r2".rate"#),
            ["link", "r1->r2", "rate"]
        );
        assert_eq!(quote_key("r1->r2"), "\"r1->r2\"");
        assert_eq!(quote_key("f_0-a"), "f_0-a");
    }
}
