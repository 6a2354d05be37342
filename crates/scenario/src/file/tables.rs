//! The pieces of expansion: groups (`count`, `first`), placeholders (`{i}`), and the `kind`-tagged
//! parameter tables read into the algorithms' structs.

use std::ops::Range;

use acclab_core::config::{QueueConfig, SchemeConfig};

use super::locate::with_missing_field;

/// A finding of expansion: the key path and what is wrong (the caller adds file and line).
pub(super) type Finding = (String, String);

/// The most links (each direction one) and flows a scenario's groups may expand to.
pub const MAX_MEMBERS: u64 = 2_000_000;

/// Indices of a group: `count` members numbered from `first` (default 0); one member otherwise.
pub(super) fn group(
    count: Option<u32>,
    first: Option<u32>,
    key: &str,
) -> Result<Range<u32>, Finding> {
    let first = first.unwrap_or(0);
    let count = count.unwrap_or(1);
    if u64::from(count) > MAX_MEMBERS {
        return Err((
            key.to_string(),
            format!("must be in [0, {MAX_MEMBERS}], not {count}"),
        ));
    }
    match first.checked_add(count) {
        Some(end) => Ok(first..end),
        None => Err((
            key.to_string(),
            format!("members {first} to {first} + {count} run past {}", u32::MAX),
        )),
    }
}

/// Replaces the placeholders of a group member: `{i}`, and `{i+N}`, `{i-N}`, `{i*N}`,
/// `{i*N+M}`, `{i*N-M}` with whole numbers N, M. Anything else in braces is an error.
pub(super) fn subst(s: &str, i: u32, key: &str) -> Result<String, Finding> {
    if !s.contains(['{', '}']) {
        return Ok(s.to_string());
    }
    let bad = |what: &str| {
        (
            key.to_string(),
            format!(
                "{what} in {s:?}: placeholders are {{i}}, {{i+N}}, {{i-N}}, {{i*N}}, {{i*N+M}} \
                 and {{i*N-M}} with whole numbers N, M"
            ),
        )
    };
    let mut out = String::with_capacity(s.len() + 4);
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| bad("an unclosed `{`"))?;
        let expr: String = rest[open + 1..open + close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let value = placeholder(&expr, i as i64)
            .ok_or_else(|| bad(&format!("unknown placeholder {{{expr}}}")))?;
        if value < 0 {
            return Err(bad(&format!(
                "{{{expr}}} is {value} for member {i}, below zero"
            )));
        }
        out.push_str(&value.to_string());
        rest = &rest[open + close + 1..];
    }
    if rest.contains('}') {
        return Err(bad("an unopened `}`"));
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of `i`, `i+N`, `i-N`, `i*N`, `i*N+M` or `i*N-M`.
fn placeholder(expr: &str, i: i64) -> Option<i64> {
    let rest = expr.strip_prefix('i')?;
    let number = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let (scaled, rest) = match rest.strip_prefix('*') {
        Some(r) => {
            let end = r.find(['+', '-']).unwrap_or(r.len());
            (i.checked_mul(number(&r[..end])?)?, &r[end..])
        }
        None => (i, rest),
    };
    match rest.chars().next() {
        None => Some(scaled),
        Some('+') => scaled.checked_add(number(&rest[1..])?),
        Some('-') => scaled.checked_sub(number(&rest[1..])?),
        _ => None,
    }
}

/// Reads a tagged parameter table into `T` with `from_kind`; an error names the full key path
/// of the offending parameter (`prefix.key`).
fn tagged<T>(
    prefix: &str,
    kind: &str,
    params: toml::Table,
    from_kind: impl FnOnce(
        &str,
        serde_path_to_error::Deserializer<'_, '_, toml::Value>,
    ) -> Result<T, toml::de::Error>,
) -> Result<T, Finding> {
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(toml::Value::Table(params), &mut track);
    from_kind(kind, de).map_err(|e| {
        let path = track.path().to_string();
        let key = match path.as_str() {
            "." | "" => prefix.to_string(),
            p => format!("{prefix}.{p}"),
        };
        let message = e.message().trim().to_string();
        (with_missing_field(&key, &message), message)
    })
}

/// A `queue = { kind = …, … }` table at `key`, read (validation is [`ScenarioSpec::resolve`]'s).
pub(super) fn queue_config(mut params: toml::Table, key: &str) -> Result<QueueConfig, Finding> {
    let kind_key = format!("{key}.kind");
    let kind = match params.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(_) => return Err((kind_key, "must be a string".into())),
        None => {
            return Err((
                kind_key,
                format!("missing; one of {}", QueueConfig::KINDS.join(", ")),
            ))
        }
    };
    tagged(key, &kind, params, |k, d| QueueConfig::from_kind(k, d)).map_err(|(k, message)| {
        // An unknown `kind` is reported at the table itself (no parameter was read yet); an
        // unknown variant of a parameter (`avd_stamp = "some"`) at that parameter.
        match message.starts_with("unknown variant") && k == key {
            true => (kind_key.clone(), message),
            false => (k, message),
        }
    })
}

/// `kind` + `params` of flow `id` into the scheme enum (validation is `resolve`'s).
pub(super) fn scheme(
    kind: &str,
    params: toml::Table,
    key: &str,
    id: &str,
) -> Result<SchemeConfig, Finding> {
    if !SchemeConfig::KINDS.contains(&kind) {
        return Err((
            key.replace("params", "kind"),
            format!(
                "flow {id:?}: unknown kind {kind:?}, expected one of {}",
                SchemeConfig::KINDS.join(", ")
            ),
        ));
    }
    tagged(key, kind, params, |k, d| SchemeConfig::from_kind(k, d))
        .map_err(|(k, message)| (k, format!("flow {id:?}: {message}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        let s = |t: &str, i| subst(t, i, "k");
        assert_eq!(s("h{i}", 3).unwrap(), "h3");
        assert_eq!(s("r{i+1}-{i - 1}", 3).unwrap(), "r4-2");
        assert_eq!(s("n{i*2}x{i*2+1}y{i*3-1}", 4).unwrap(), "n8x9y11");
        assert_eq!(s("plain", 4).unwrap(), "plain");
        for bad in ["r{j}", "r{i+}", "r{i/2}", "r{i", "r}", "r{2*i}", "r{i-5}"] {
            let e = s(bad, 3).unwrap_err();
            assert_eq!(e.0, "k");
            assert!(e.1.contains("placeholders are"), "{bad}: {}", e.1);
        }
    }
}
