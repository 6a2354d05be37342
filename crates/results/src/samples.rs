//! `flows.csv` and `links.csv`: their rows, their columns, and the files being written.
//!
//! The packet tier's samples count packets and bytes in integers, the model tier's in the
//! fluid's fractions: one row type, generic over that number (`u64`, the default, or `f64`),
//! written by one function per file, so that the two tiers' files cannot drift apart.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::csv_row::{open_csv, Cell, Formatted, Row};

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

/// A row of `flows.csv`, the flow named `id`, after its time (`time`: `s.t_s`, or its text
/// already written); `cc_columns` cells of controller state after the common ones (empty where
/// the flow's sender has none).
pub fn flow_record<'r, N: Cell>(
    row: &'r mut Row,
    time: &(impl Cell + ?Sized),
    s: &FlowSample<N>,
    id: &str,
    cc_columns: usize,
) -> &'r mut Row {
    row.cell(time)
        .cell(id)
        .cell(&s.throughput_bps)
        .cell(&s.send_rate_bps)
        .cell(&s.cwnd_bytes)
        .cell(&s.srtt_s)
        .cell(&s.accumulation_bytes)
        .cell(&s.lost_packets)
        .cell(&s.received_bps);
    for k in 0..cc_columns {
        row.cell(&s.cc.get(k).copied().flatten());
    }
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

/// A row of `links.csv`, the link named `name`, after its time (as [`flow_record`]'s).
pub fn link_record<'r, N: Cell>(
    row: &'r mut Row,
    time: &(impl Cell + ?Sized),
    s: &LinkSample<N>,
    name: &str,
) -> &'r mut Row {
    row.cell(time)
        .cell(name)
        .cell(&s.queue_pkts)
        .cell(&s.queue_bytes)
        .cell(&s.utilization)
        .cell(&s.drops)
        .cell(&s.marks)
        .cells(&s.aqm)
}

/// Writes `flows.csv` and `links.csv` into `dir` whole from samples kept in memory.
pub fn write_csvs<N: Cell>(
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
pub fn write_links_csv<N: Cell>(
    dir: &Path,
    names: &Names,
    links: &[LinkSample<N>],
) -> std::io::Result<()> {
    let mut w = open_csv(&dir.join("links.csv"), &link_columns(&names.aqm_columns))?;
    let mut row = Row::default();
    for s in links {
        link_record(&mut row, &s.t_s, s, &names.links[s.link as usize]).end(&mut w)?;
    }
    w.flush()
}

/// A run's flow ids by index, read where the run keeps them: the streamed `flows.csv` holds
/// them for the whole run, and a workload's million ids copied were 30 bytes a flow.
pub trait FlowIds: Send {
    /// Flow `flow`'s id (a workload's flow's is made when asked for: held, a million ids took
    /// 40 bytes a flow).
    fn id(&self, flow: usize) -> std::borrow::Cow<'_, str>;
    /// How many flows there are.
    fn count(&self) -> usize;
}

impl FlowIds for Vec<String> {
    fn id(&self, flow: usize) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(&self[flow])
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
    flows: BufWriter<File>,
    links: BufWriter<File>,
    /// delays.csv, opened with the first flow that has delays (the model tier's fluid has
    /// none).
    delays: Option<BufWriter<File>>,
    /// The row being written (its buffer reused from row to row).
    row: Row,
    /// The last sample's time and its text (every row of a sample starts with it).
    time: (Option<u64>, Vec<u8>),
    error: Option<std::io::Error>,
}

impl CsvSamples {
    /// Opens both files in `dir` with their headers.
    pub fn create(dir: &Path, names: Names) -> std::io::Result<CsvSamples> {
        let flows = open_csv(
            &dir.join("flows.csv.part"),
            &flow_columns(&names.cc_columns),
        )?;
        let links = open_csv(
            &dir.join("links.csv.part"),
            &link_columns(&names.aqm_columns),
        )?;
        Ok(CsvSamples {
            dir: dir.to_path_buf(),
            names,
            flows,
            links,
            delays: None,
            row: Row::default(),
            time: (None, Vec::new()),
            error: None,
        })
    }

    /// The text of time `t`, made once for the rows of a sample.
    fn time(time: &mut (Option<u64>, Vec<u8>), t: f64) -> Formatted<'_> {
        if time.0 != Some(t.to_bits()) {
            time.1.clear();
            t.put(&mut time.1);
            time.0 = Some(t.to_bits());
        }
        Formatted(&time.1)
    }

    /// Ends the row into `w`, keeping the run's first write error; after one, rows are
    /// dropped (`finish` reports it, and the files keep their `.part` names).
    fn end(row: &mut Row, w: &mut BufWriter<File>, error: &mut Option<std::io::Error>) {
        match error {
            None => *error = row.end(w).err(),
            Some(_) => row.clear(),
        }
    }
}

impl<N: Cell> SampleSink<N> for CsvSamples {
    fn flow(&mut self, s: &FlowSample<N>) {
        let cc = self.names.cc_columns.len();
        let id = self.names.flows.id(s.flow as usize);
        let t = CsvSamples::time(&mut self.time, s.t_s);
        flow_record(&mut self.row, &t, s, &id, cc);
        CsvSamples::end(&mut self.row, &mut self.flows, &mut self.error);
    }

    fn link(&mut self, s: &LinkSample<N>) {
        let t = CsvSamples::time(&mut self.time, s.t_s);
        link_record(&mut self.row, &t, s, &self.names.links[s.link as usize]);
        CsvSamples::end(&mut self.row, &mut self.links, &mut self.error);
    }

    fn delays(&mut self, flow: u32, bins: &mut dyn Iterator<Item = crate::delay::HistogramBin>) {
        let name = self.names.flows.id(flow as usize);
        for b in bins {
            let w = match &mut self.delays {
                Some(w) => w,
                None => match open_csv(&self.dir.join("delays.csv.part"), &DELAY_COLUMNS) {
                    Ok(w) => self.delays.insert(w),
                    Err(e) => {
                        self.error.get_or_insert(e);
                        return;
                    }
                },
            };
            delay_record(&mut self.row, &name, &b);
            CsvSamples::end(&mut self.row, w, &mut self.error);
        }
    }

    /// Flushes the files and gives them their names.
    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
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

fn delay_record<'r>(row: &'r mut Row, flow: &str, b: &crate::delay::HistogramBin) -> &'r mut Row {
    row.cell(flow)
        .cell(&crate::delay::ExactSeconds(b.from_ns))
        .cell(&crate::delay::ExactSeconds(b.to_ns))
        .cell(&b.packets)
}

/// Writes delays.csv whole into `dir` from (flow name, its histogram) pairs, in their order;
/// nothing if no flow has a delay.
pub fn write_delays_csv<'a>(
    dir: &Path,
    flows: impl Iterator<Item = (std::borrow::Cow<'a, str>, Vec<crate::delay::HistogramBin>)>,
) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    let mut row = Row::default();
    for (name, bins) in flows {
        for b in &bins {
            if bytes.is_empty() {
                row.cells(DELAY_COLUMNS).end(&mut bytes)?;
            }
            delay_record(&mut row, &name, b).end(&mut bytes)?;
        }
    }
    if bytes.is_empty() {
        return Ok(());
    }
    crate::files::write_atomic(&dir.join(DELAYS_FILE), &bytes)
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
        fn text<N: Cell>(s: &FlowSample<N>, cc: usize) -> String {
            let mut bytes = Vec::new();
            flow_record(&mut Row::default(), &s.t_s, s, "f", cc)
                .end(&mut bytes)
                .unwrap();
            String::from_utf8(bytes).unwrap()
        }
        // A whole number prints the same from either type.
        assert_eq!(text(&int, 1), text(&frac, 1));
        assert!(text(&int, 1).ends_with(",0.25\n"));
        // No state: an empty cell per column.
        let none = FlowSample {
            cc: vec![],
            ..int.clone()
        };
        assert!(text(&none, 2).ends_with(",900000,,\n"));
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
