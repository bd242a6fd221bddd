//! Levelization: a topological order of the flat combinational graph (`Op` and
//! `Alias` nets after their operands), or the combinational loop that prevents one.

use crate::error::SimError;
use crate::flatten::FlatDesign;
use crate::operands::each_operand;
use hdl::ir::{Driver, Net, NetId};

/// Calls `f` on every net `net` depends on combinationally.
fn each_dep(net: &Net, mut f: impl FnMut(NetId)) {
    match &net.driver {
        Driver::Op(op) => each_operand(op, f),
        Driver::Alias(src) => f(*src),
        _ => {}
    }
}

/// Readable name of flat net `id` for messages.
pub(crate) fn describe(flat: &FlatDesign, id: NetId) -> String {
    match flat.nets.get(id.0 as usize) {
        Some(Net { name: Some(n), .. }) => n.clone(),
        Some(net) => format!("<{} #{}>", net.driver.kind_name(), id.0),
        None => format!("<#{}>", id.0),
    }
}

/// Every net of `flat`, each after the nets it depends on combinationally
/// (Kahn's algorithm; iterative, so deep logic cannot overflow the stack).
/// Fails with [`SimError::CombLoop`] naming the nets of one loop.
pub fn levelize(flat: &FlatDesign) -> Result<Vec<NetId>, SimError> {
    let n = flat.nets.len();
    let mut pending = vec![0u32; n];
    let mut user_count = vec![0u32; n + 1];
    for (i, net) in flat.nets.iter().enumerate() {
        let mut missing = None;
        each_dep(net, |dep| {
            if dep.0 as usize >= n {
                missing = Some(dep);
            } else {
                user_count[dep.0 as usize + 1] += 1;
                pending[i] += 1;
            }
        });
        if let Some(dep) = missing {
            return Err(SimError::Flatten {
                module: flat.name.clone(),
                reason: format!(
                    "{} reads net #{}, which does not exist",
                    describe(flat, NetId(i as u32)),
                    dep.0
                ),
            });
        }
    }
    // Compressed adjacency: users of net k are users[start[k]..start[k + 1]].
    for k in 0..n {
        user_count[k + 1] += user_count[k];
    }
    let start = user_count;
    let mut fill = start.clone();
    let mut users = vec![NetId(0); start[n] as usize];
    for (i, net) in flat.nets.iter().enumerate() {
        each_dep(net, |dep| {
            let slot = &mut fill[dep.0 as usize];
            users[*slot as usize] = NetId(i as u32);
            *slot += 1;
        });
    }

    let mut order: Vec<NetId> = (0..n)
        .filter(|&i| pending[i] == 0)
        .map(|i| NetId(i as u32))
        .collect();
    order.reserve(n - order.len());
    let mut next = 0;
    while next < order.len() {
        let net = order[next].0 as usize;
        next += 1;
        for user in &users[start[net] as usize..start[net + 1] as usize] {
            let p = &mut pending[user.0 as usize];
            *p -= 1;
            if *p == 0 {
                order.push(*user);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }

    // Every net still pending has a pending operand: walk those until one repeats.
    let first = (0..n).find(|&i| pending[i] > 0).unwrap_or(0);
    let mut seen = vec![usize::MAX; n];
    let mut path: Vec<NetId> = Vec::new();
    let mut cur = NetId(first as u32);
    while seen[cur.0 as usize] == usize::MAX {
        seen[cur.0 as usize] = path.len();
        path.push(cur);
        let mut next = None;
        each_dep(&flat.nets[cur.0 as usize], |d| {
            if next.is_none() && pending[d.0 as usize] > 0 {
                next = Some(d);
            }
        });
        match next {
            Some(d) => cur = d,
            None => break,
        }
    }
    let from = seen[cur.0 as usize].min(path.len());
    let mut cycle: Vec<String> = path[from..].iter().map(|id| describe(flat, *id)).collect();
    // The walk went from users to operands; report it in data-flow order.
    cycle.reverse();
    if let Some(first) = cycle.first().cloned() {
        cycle.push(first);
    }
    Err(SimError::CombLoop(cycle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdl::ir::{BitOp, Op};

    fn net(name: &str, driver: Driver) -> Net {
        Net {
            name: Some(name.to_string()),
            width: 4,
            driver,
            location: hdl::ir::SourceLoc::unknown(),
        }
    }

    fn design(nets: Vec<Net>) -> FlatDesign {
        FlatDesign {
            name: "t".into(),
            nets,
            ports: vec![],
            domains: vec![],
            regs: vec![],
            mems: vec![],
        }
    }

    #[test]
    fn orders_operands_first() {
        let d = design(vec![
            net("y", Driver::Op(Op::Bit(BitOp::And, NetId(1), NetId(2)))),
            net("w", Driver::Alias(NetId(2))),
            net("x", Driver::Input(hdl::ir::PortId(0))),
        ]);
        let order = levelize(&d).unwrap();
        let pos = |i: u32| order.iter().position(|n| n.0 == i).unwrap();
        assert!(pos(2) < pos(1));
        assert!(pos(1) < pos(0));
        assert_eq!(order.len(), 3);
    }

    #[test]
    fn reports_a_loop_instead_of_hanging() {
        let d = design(vec![
            net("x", Driver::Input(hdl::ir::PortId(0))),
            net("a", Driver::Op(Op::Bit(BitOp::Xor, NetId(0), NetId(2)))),
            net("b", Driver::Alias(NetId(3))),
            net("c", Driver::Op(Op::Not(NetId(1)))),
            net("tail", Driver::Op(Op::Not(NetId(2)))),
        ]);
        match levelize(&d) {
            Err(SimError::CombLoop(path)) => {
                assert_eq!(path.len(), 4, "{path:?}");
                assert_eq!(path.first(), path.last());
                for n in ["a", "b", "c"] {
                    assert!(path.contains(&n.to_string()), "{path:?}");
                }
            }
            other => panic!("expected a loop, got {other:?}"),
        }
    }
}
