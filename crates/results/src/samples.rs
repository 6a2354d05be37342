//! `flows.csv` and `links.csv`: their rows, their columns, and the files being written.
//!
//! The packet tier's samples count packets and bytes in integers, the model tier's in the
//! fluid's fractions: one row type, generic over that number (`u64`, the default, or `f64`),
//! written by one function per file, so that the two tiers' files cannot drift apart.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// One row of `flows.csv`: flow `flow` over the sample interval ending at `t_s`.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSample<N = u64> {
    pub t_s: f64,
    /// The flow's index in the scenario.
    pub flow: u32,
    /// Receiver goodput: bytes delivered in order to the application over the interval. A
    /// repair that fills a hole releases at once the data received behind it, so a sample after
    /// a loss can exceed the path's capacity; `received_bps` cannot.
    pub throughput_bps: f64,
    /// Data bytes that reached the receiver over the interval, out of order and duplicates
    /// included: what the path carried to it.
    pub received_bps: f64,
    pub send_rate_bps: f64,
    pub cwnd_bytes: Option<N>,
    pub srtt_s: Option<f64>,
    pub accumulation_bytes: Option<f64>,
    /// Data packets of the flow lost so far.
    pub lost_packets: N,
    /// Its sender's congestion-control state, one value (or none) per column of
    /// [`Names::cc_columns`]; empty where there are none.
    pub cc: Vec<Option<f64>>,
}

/// One row of `links.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSample<N = u64> {
    pub t_s: f64,
    /// The link's index in the scenario.
    pub link: u32,
    pub queue_pkts: N,
    pub queue_bytes: N,
    pub utilization: f64,
    pub drops: N,
    pub marks: N,
    /// Values of the AQM columns (the header's, after the link's own), `None` where this link
    /// has none.
    pub aqm: Vec<Option<f64>>,
}

/// Where samples go as they are taken: `flows.csv` and `links.csv` written as the run goes
/// ([`CsvSamples`]), memory, or nowhere (`()`).
pub trait SampleSink<N = u64>: Send {
    fn flow(&mut self, s: &FlowSample<N>);
    fn link(&mut self, s: &LinkSample<N>);
    /// The run is over: write out what is buffered; the first error of the run, if any.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Whether samples are wanted at all (a run for its summary alone need not build them).
    fn wants_rows(&self) -> bool {
        true
    }
    /// Flow `flow`'s one-way delays over the window, final (the flow is done, or the run is):
    /// `delays.csv`'s rows.
    fn delays(&mut self, _flow: u32, _bins: &mut dyn Iterator<Item = crate::delay::HistogramBin>) {}
}

/// Samples dropped.
impl<N> SampleSink<N> for () {
    fn flow(&mut self, _: &FlowSample<N>) {}
    fn link(&mut self, _: &LinkSample<N>) {}
    fn wants_rows(&self) -> bool {
        false
    }
}

fn opt<T: Display>(x: &Option<T>) -> String {
    x.as_ref().map_or(String::new(), |v| v.to_string())
}

/// The columns of `flows.csv`.
pub const FLOW_COLUMNS: [&str; 9] = [
    "time_s",
    "flow",
    "throughput_bps",
    "send_rate_bps",
    "cwnd_bytes",
    "srtt_s",
    "accumulation_bytes",
    "lost_packets",
    "received_bps",
];

/// The columns of `flows.csv` with these controller-state columns.
pub fn flow_columns(cc_columns: &[String]) -> Vec<String> {
    let mut header: Vec<String> = FLOW_COLUMNS.map(String::from).to_vec();
    header.extend(cc_columns.iter().cloned());
    header
}

/// A row of `flows.csv`, the flow named `id`; `cc_columns` cells of controller state after the
/// common ones (empty where the flow's sender has none).
pub fn flow_record<N: Display>(s: &FlowSample<N>, id: &str, cc_columns: usize) -> Vec<String> {
    let mut row = vec![
        s.t_s.to_string(),
        id.to_string(),
        s.throughput_bps.to_string(),
        s.send_rate_bps.to_string(),
        opt(&s.cwnd_bytes),
        opt(&s.srtt_s),
        opt(&s.accumulation_bytes),
        s.lost_packets.to_string(),
        s.received_bps.to_string(),
    ];
    row.extend((0..cc_columns).map(|k| opt(&s.cc.get(k).copied().flatten())));
    row
}

/// The columns of `links.csv` with these AQM columns.
pub fn link_columns(aqm_columns: &[String]) -> Vec<String> {
    let mut header: Vec<String> = [
        "time_s",
        "link",
        "queue_pkts",
        "queue_bytes",
        "utilization",
        "drops",
        "marks",
    ]
    .map(String::from)
    .to_vec();
    header.extend(aqm_columns.iter().cloned());
    header
}

/// A row of `links.csv`, the link named `name`.
pub fn link_record<N: Display>(s: &LinkSample<N>, name: &str) -> Vec<String> {
    let mut row = vec![
        s.t_s.to_string(),
        name.to_string(),
        s.queue_pkts.to_string(),
        s.queue_bytes.to_string(),
        s.utilization.to_string(),
        s.drops.to_string(),
        s.marks.to_string(),
    ];
    row.extend(s.aqm.iter().map(opt));
    row
}

/// Writes `flows.csv` and `links.csv` into `dir` whole from samples kept in memory.
pub fn write_csvs<N: Display>(
    dir: &Path,
    names: Names,
    flows: &[FlowSample<N>],
    links: &[LinkSample<N>],
) -> std::io::Result<()> {
    let mut files = CsvSamples::create(dir, names)?;
    for s in flows {
        files.flow(s);
    }
    for s in links {
        files.link(s);
    }
    SampleSink::<N>::finish(&mut files)
}

/// Writes `links.csv` alone into `dir` (live mode's router, which has no flows of its own).
pub fn write_links_csv<N: Display>(
    dir: &Path,
    names: &Names,
    links: &[LinkSample<N>],
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join("links.csv"))?;
    w.write_record(link_columns(&names.aqm_columns))?;
    for s in links {
        w.write_record(link_record(s, &names.links[s.link as usize]))?;
    }
    w.flush()
}

/// A run's flow ids by index, read where the run keeps them: the streamed `flows.csv` holds
/// them for the whole run, and a workload's million ids copied were 30 bytes a flow.
pub trait FlowIds: Send {
    fn id(&self, flow: usize) -> &str;
    /// How many flows there are.
    fn count(&self) -> usize;
}

impl FlowIds for Vec<String> {
    fn id(&self, flow: usize) -> &str {
        &self[flow]
    }
    fn count(&self) -> usize {
        self.len()
    }
}

/// What the rows of a run's files are called: its flows' ids, its links' names, and the AQM
/// columns of `links.csv` (after the links' own).
pub struct Names {
    pub flows: Box<dyn FlowIds>,
    pub links: Vec<String>,
    pub aqm_columns: Vec<String>,
    /// The controller-state columns of `flows.csv` (after the flows' own).
    pub cc_columns: Vec<String>,
}

/// `flows.csv` and `links.csv` being written: as `flows.csv.part` and `links.csv.part`, which
/// get their names only when [`SampleSink::finish`] has written everything, so that a run that
/// dies leaves no file that looks complete. The first write error is kept and reported by
/// `finish`. Every tier writes its samples through it.
pub struct CsvSamples {
    dir: PathBuf,
    names: Names,
    flows: csv::Writer<std::fs::File>,
    links: csv::Writer<std::fs::File>,
    /// delays.csv, opened with the first flow that has delays (the model tier's fluid has
    /// none).
    delays: Option<csv::Writer<std::fs::File>>,
    error: Option<csv::Error>,
}

impl CsvSamples {
    /// Opens both files in `dir` with their headers.
    pub fn create(dir: &Path, names: Names) -> std::io::Result<CsvSamples> {
        let mut flows = csv::Writer::from_path(dir.join("flows.csv.part"))?;
        flows.write_record(flow_columns(&names.cc_columns))?;
        let mut links = csv::Writer::from_path(dir.join("links.csv.part"))?;
        links.write_record(link_columns(&names.aqm_columns))?;
        Ok(CsvSamples {
            dir: dir.to_path_buf(),
            names,
            flows,
            links,
            delays: None,
            error: None,
        })
    }

    fn write<I>(error: &mut Option<csv::Error>, w: &mut csv::Writer<std::fs::File>, row: I)
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        if error.is_none() {
            if let Err(e) = w.write_record(row) {
                *error = Some(e);
            }
        }
    }
}

impl<N: Display> SampleSink<N> for CsvSamples {
    fn flow(&mut self, s: &FlowSample<N>) {
        let cc = self.names.cc_columns.len();
        let row = flow_record(s, self.names.flows.id(s.flow as usize), cc);
        CsvSamples::write(&mut self.error, &mut self.flows, row);
    }

    fn link(&mut self, s: &LinkSample<N>) {
        let row = link_record(s, &self.names.links[s.link as usize]);
        CsvSamples::write(&mut self.error, &mut self.links, row);
    }

    fn delays(&mut self, flow: u32, bins: &mut dyn Iterator<Item = crate::delay::HistogramBin>) {
        let name = self.names.flows.id(flow as usize);
        for b in bins {
            let w = match &mut self.delays {
                Some(w) => w,
                None => match open_delays(&self.dir.join("delays.csv.part")) {
                    Ok(w) => self.delays.insert(w),
                    Err(e) => {
                        self.error.get_or_insert(e);
                        return;
                    }
                },
            };
            let row = delay_record(name, &b);
            CsvSamples::write(&mut self.error, w, row);
        }
    }

    /// Flushes the files and gives them their names.
    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(std::io::Error::other(e));
        }
        self.flows.flush()?;
        self.links.flush()?;
        let mut files = vec!["flows.csv", "links.csv"];
        if let Some(d) = &mut self.delays {
            d.flush()?;
            files.push(DELAYS_FILE);
        }
        for f in files {
            std::fs::rename(self.dir.join(format!("{f}.part")), self.dir.join(f))?;
        }
        Ok(())
    }
}

/// The file of every flow's one-way delay histogram over the measurement window.
pub const DELAYS_FILE: &str = "delays.csv";

/// delays.csv's columns: the flow, a bucket's bounds (s) and its packets.
const DELAY_COLUMNS: [&str; 4] = ["flow", "delay_from_s", "delay_to_s", "packets"];

fn open_delays(path: &Path) -> Result<csv::Writer<std::fs::File>, csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(DELAY_COLUMNS)?;
    Ok(w)
}

fn delay_record(flow: &str, b: &crate::delay::HistogramBin) -> [String; 4] {
    [
        flow.to_string(),
        crate::delay::exact_seconds(b.from_ns),
        crate::delay::exact_seconds(b.to_ns),
        b.packets.to_string(),
    ]
}

/// Writes delays.csv whole into `dir` from (flow name, its histogram) pairs, in their order;
/// nothing if no flow has a delay.
pub fn write_delays_csv<'a>(
    dir: &Path,
    flows: impl Iterator<Item = (&'a str, Vec<crate::delay::HistogramBin>)>,
) -> std::io::Result<()> {
    let mut w: Option<csv::Writer<Vec<u8>>> = None;
    for (name, bins) in flows {
        for b in &bins {
            let w = match &mut w {
                Some(w) => w,
                None => {
                    let mut n = csv::Writer::from_writer(Vec::new());
                    n.write_record(DELAY_COLUMNS)?;
                    w.insert(n)
                }
            };
            w.write_record(delay_record(name, b))?;
        }
    }
    match w {
        Some(w) => {
            let bytes = w
                .into_inner()
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            crate::files::write_atomic(&dir.join(DELAYS_FILE), &bytes)
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_and_fractional_rows_are_written_alike() {
        let dir = tempfile::tempdir().unwrap();
        let names = Names {
            flows: Box::new(vec!["f".to_string()]),
            links: vec!["l".into()],
            aqm_columns: vec!["p".into()],
            cc_columns: vec!["alpha".into()],
        };
        let int = FlowSample::<u64> {
            t_s: 0.5,
            flow: 0,
            throughput_bps: 1e6,
            received_bps: 9e5,
            send_rate_bps: 2e6,
            cwnd_bytes: Some(3000),
            srtt_s: None,
            accumulation_bytes: Some(1.5),
            lost_packets: 2,
            cc: vec![Some(0.25)],
        };
        let frac = FlowSample::<f64> {
            cwnd_bytes: Some(3000.0),
            lost_packets: 2.0,
            t_s: int.t_s,
            flow: 0,
            throughput_bps: int.throughput_bps,
            received_bps: int.received_bps,
            send_rate_bps: int.send_rate_bps,
            srtt_s: None,
            accumulation_bytes: int.accumulation_bytes,
            cc: vec![Some(0.25)],
        };
        // A whole number prints the same from either type.
        assert_eq!(flow_record(&int, "f", 1), flow_record(&frac, "f", 1));
        assert_eq!(flow_record(&int, "f", 1).last().unwrap(), "0.25");
        // No state: an empty cell per column.
        let none = FlowSample {
            cc: vec![],
            ..int.clone()
        };
        assert_eq!(flow_record(&none, "f", 2)[9..], ["", ""]);
        let link = LinkSample::<f64> {
            t_s: 0.5,
            link: 0,
            queue_pkts: 2.5,
            queue_bytes: 2500.0,
            utilization: 1.0,
            drops: 0.0,
            marks: 1.0,
            aqm: vec![None],
        };
        write_csvs(dir.path(), names, &[frac], &[link]).unwrap();
        let flows = std::fs::read_to_string(dir.path().join("flows.csv")).unwrap();
        assert_eq!(
            flows,
            "time_s,flow,throughput_bps,send_rate_bps,cwnd_bytes,srtt_s,accumulation_bytes,\
             lost_packets,received_bps,alpha\n0.5,f,1000000,2000000,3000,,1.5,2,900000,0.25\n"
        );
        let links = std::fs::read_to_string(dir.path().join("links.csv")).unwrap();
        assert_eq!(
            links,
            "time_s,link,queue_pkts,queue_bytes,utilization,drops,marks,p\n0.5,l,2.5,2500,1,0,1,\n"
        );
        assert!(!dir.path().join("flows.csv.part").exists());
    }
}
