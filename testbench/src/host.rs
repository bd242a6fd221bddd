//! The machine a benchmark runs on, as its report names it: a rate is quotable only
//! with the CPU it was measured on.

use std::fmt;

/// The CPU a process runs on and how many logical CPUs it may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// The CPU's model name, with its family and model numbers when the kernel
    /// gives them (a virtual machine may name only the line, "AMD EPYC", and the
    /// numbers tell its generations apart); "unknown CPU" where neither is known.
    pub cpu: String,
    /// Logical CPUs available to the process (at least 1).
    pub logical_cpus: usize,
}

impl Host {
    /// This machine: its CPU from `/proc/cpuinfo` (Linux; elsewhere an unknown
    /// CPU) and the logical CPUs the process may use.
    pub fn detect() -> Host {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let logical_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Host::from_cpuinfo(&cpuinfo, logical_cpus)
    }

    /// The host that the text of `/proc/cpuinfo` describes (its first processor's
    /// entry), with `logical_cpus` available.
    pub fn from_cpuinfo(cpuinfo: &str, logical_cpus: usize) -> Host {
        let first = cpuinfo.split("\n\n").next().unwrap_or_default();
        let field = |key: &str| {
            first.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == key)
                    .then(|| v.trim())
                    .filter(|v| !v.is_empty())
            })
        };
        let numbers = match (field("cpu family"), field("model")) {
            (Some(family), Some(model)) => Some(format!("family {family}, model {model}")),
            _ => None,
        };
        let cpu = match (field("model name"), numbers) {
            (Some(name), Some(numbers)) => format!("{name} ({numbers})"),
            (Some(name), None) => name.to_string(),
            (None, Some(numbers)) => format!("CPU {numbers}"),
            (None, None) => "unknown CPU".to_string(),
        };
        Host {
            cpu,
            logical_cpus: logical_cpus.max(1),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.logical_cpus == 1 { "" } else { "s" };
        write!(f, "{}, {} logical CPU{s}", self.cpu, self.logical_cpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPYC: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\
        model\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n\n\
        processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n\
        model name\t: Other\n";

    #[test]
    fn the_first_processor_is_named_with_its_family_and_model() {
        let host = Host::from_cpuinfo(EPYC, 2);
        assert_eq!(host.cpu, "AMD EPYC (family 25, model 17)");
        assert_eq!(
            host.to_string(),
            "AMD EPYC (family 25, model 17), 2 logical CPUs"
        );
    }

    #[test]
    fn missing_fields_name_what_is_known() {
        let xeon = "model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n";
        assert_eq!(
            Host::from_cpuinfo(xeon, 1).to_string(),
            "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz, 1 logical CPU"
        );
        // An ARM kernel gives no model name; "model" alone is not the CPU's model.
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n";
        assert_eq!(Host::from_cpuinfo(arm, 4).cpu, "unknown CPU");
        assert_eq!(
            Host::from_cpuinfo("", 0).to_string(),
            "unknown CPU, 1 logical CPU"
        );
        // Keys are matched whole, in any order.
        let reordered = "model name\t: Intel Xeon\nmodel\t\t: 106\ncpu family\t: 6\n";
        assert_eq!(
            Host::from_cpuinfo(reordered, 2).cpu,
            "Intel Xeon (family 6, model 106)"
        );
        let numbers_only = "cpu family\t: 6\nmodel\t\t: 106\nmodel name\t:\n";
        assert_eq!(
            Host::from_cpuinfo(numbers_only, 8).cpu,
            "CPU family 6, model 106"
        );
    }
}
