//! A picture of a scenario's network (`acclab show topology`): nodes in layers, one line per
//! cable (a pair of opposite links, or a lone link), coloured by layer.
//!
//! Layers: a generated fabric's names say their tier (`h…` hosts at the bottom, then `edge…`
//! or `leaf…`, `agg…`, then `core…` or `spine…` at the top); any other network is layered by
//! hop distance from its hosts (nodes with a single outgoing link). Within a layer nodes keep
//! the scenario's order, spread evenly; switches are labelled while a layer has at most 32.

use acclab_scenario::Scenario;
use plotters::prelude::*;

const WIDTH: u32 = 1400;
const HEIGHT: u32 = 700;

/// Each node's layer (0 = hosts).
fn layers(sc: &Scenario) -> Vec<usize> {
    let tier = |name: &str| -> Option<usize> {
        let digit_after = |p: &str| {
            name.strip_prefix(p)
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        };
        match () {
            _ if digit_after("h") => Some(0),
            _ if digit_after("edge") || digit_after("leaf") => Some(1),
            _ if digit_after("agg") => Some(2),
            _ if digit_after("spine") => Some(2),
            _ if digit_after("core") => Some(3),
            _ => None,
        }
    };
    let named: Option<Vec<usize>> = sc.nodes.iter().map(|n| tier(n)).collect();
    if let Some(l) = named {
        return l;
    }
    // Hop distance from the nearest host, by breadth-first search.
    let n = sc.nodes.len();
    let mut out_degree = vec![0usize; n];
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for l in &sc.links {
        out_degree[l.from.0 as usize] += 1;
        next[l.from.0 as usize].push(l.to.0 as usize);
    }
    let mut layer = vec![usize::MAX; n];
    let mut frontier: std::collections::VecDeque<usize> =
        (0..n).filter(|&i| out_degree[i] == 1).collect();
    for &i in &frontier {
        layer[i] = 0;
    }
    while let Some(i) = frontier.pop_front() {
        for &j in &next[i] {
            if layer[j] == usize::MAX {
                layer[j] = layer[i] + 1;
                frontier.push_back(j);
            }
        }
    }
    layer
        .iter()
        .map(|&l| if l == usize::MAX { 0 } else { l })
        .collect()
}

/// The network of `sc` as SVG text.
pub fn network_svg(sc: &Scenario) -> Result<String, String> {
    crate::plot::register_font();
    let layer = layers(sc);
    let top = layer.iter().copied().max().unwrap_or(0);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); top + 1];
    for (i, &l) in layer.iter().enumerate() {
        members[l].push(i);
    }
    let (w, h) = (WIDTH as f64, HEIGHT as f64);
    let (margin, title) = (40.0, 50.0);
    let mut pos = vec![(0i32, 0i32); sc.nodes.len()];
    for (l, nodes) in members.iter().enumerate() {
        let y = match top {
            0 => h / 2.0,
            _ => h - margin - (h - margin - title - margin) * l as f64 / top as f64,
        };
        for (k, &i) in nodes.iter().enumerate() {
            let x = margin + (w - 2.0 * margin) * (k as f64 + 0.5) / nodes.len() as f64;
            pos[i] = (x as i32, y as i32);
        }
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let ends: std::collections::HashSet<(u32, u32)> =
            sc.links.iter().map(|l| (l.from.0, l.to.0)).collect();
        // A cable: a pair of opposite links, drawn once, or a lone link.
        let drawn = |l: &&acclab_scenario::LinkDef| {
            l.from.0 < l.to.0 || !ends.contains(&(l.to.0, l.from.0))
        };
        let cables = sc.links.iter().filter(drawn).count();
        let hosts = layer.iter().filter(|&&l| l == 0).count();
        root.draw(&Text::new(
            format!(
                "{}: {} hosts, {} switches, {} cables",
                sc.name,
                hosts,
                sc.nodes.len() - hosts,
                cables
            ),
            (margin as i32, 14),
            ("sans-serif", 20).into_font(),
        ))
        .map_err(e)?;
        let line = RGBColor(150, 150, 150).stroke_width(if cables > 2000 { 1 } else { 2 });
        for l in sc.links.iter().filter(drawn) {
            let (a, b) = (l.from.0 as usize, l.to.0 as usize);
            root.draw(&PathElement::new(vec![pos[a], pos[b]], line))
                .map_err(e)?;
        }
        for (i, &(x, y)) in pos.iter().enumerate() {
            let colour = Palette99::pick(layer[i]).to_rgba();
            let r = if layer[i] == 0 { 3 } else { 6 };
            root.draw(&Circle::new((x, y), r, colour.filled()))
                .map_err(e)?;
            if layer[i] > 0 && members[layer[i]].len() <= 32 {
                root.draw(&Text::new(
                    sc.nodes[i].clone(),
                    (x + 7, y - 14),
                    ("sans-serif", 11).into_font(),
                ))
                .map_err(e)?;
            }
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// Writes `<stem>.svg` and `<stem>.png` of the network of `sc` into `dir`; their names.
pub fn write_network(
    dir: &std::path::Path,
    stem: &str,
    sc: &Scenario,
) -> std::io::Result<Vec<String>> {
    let svg = network_svg(sc).map_err(std::io::Error::other)?;
    let png = crate::plot::rasterise(&svg).map_err(std::io::Error::other)?;
    crate::files::write_atomic(&dir.join(format!("{stem}.svg")), svg.as_bytes())?;
    crate::files::write_atomic(&dir.join(format!("{stem}.png")), &png)?;
    Ok(vec![format!("{stem}.svg"), format!("{stem}.png")])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fat_tree_is_drawn_in_its_tiers_and_a_dumbbell_by_distance() {
        let ft = acclab_scenario::parse(
            "name = \"ft\"\nduration = \"1s\"\n[topology]\nkind = \"fat-tree\"\nk = 4\nlink_rate = \"1Gbps\"\nlink_delay = \"1us\"\n",
            "ft",
        )
        .unwrap();
        let l = layers(&ft);
        let of = |n: &str| l[ft.nodes.iter().position(|x| x == n).unwrap()];
        assert_eq!(
            (of("h0"), of("edge0_0"), of("agg0_0"), of("core0")),
            (0, 1, 2, 3)
        );
        let svg = network_svg(&ft).unwrap();
        assert!(
            svg.contains("16 hosts, 20 switches, 48 cables"),
            "{}",
            &svg[..400]
        );
        let db = acclab_scenario::parse(&acclab_scenario::templates::reno_dumbbell(2, 10, 1), "db")
            .unwrap();
        let l = layers(&db);
        let of = |n: &str| l[db.nodes.iter().position(|x| x == n).unwrap()];
        assert_eq!((of("s0"), of("r1"), of("r2"), of("d1")), (0, 1, 1, 0));
    }
}
