//! Where the ranks' cores ran in each launch (a cache line's round trip between them, before and
//! after its sweep), and which launches make which set (the model's §12: a node's placements,
//! each a set with its `cores` figure).

use super::launch::Launch;
use crate::trace::OTHER_CORES;

/// Which launches ran on cores as near together as each other: a launch's figure is the larger
/// of its cache line's round trips before and after its sweep. The figures fall in placements,
/// each from the nearest figure not yet placed up to under [`OTHER_CORES`] times it; the
/// placement of the most launches is the majority's (`Some(true)`; of two as many, the nearer),
/// the next the second set's (`Some(false)`), and a launch at any other is in no set (`None`:
/// a set fitted to placements 2× apart fits neither, and this machine has shown three, a
/// cache line at about 60, 140 and 300–500 ns). Every launch is the majority's where one has no
/// figure (the ranks share no memory).
pub fn same_cores(lines: &[Option<[f64; 2]>]) -> Vec<Option<bool>> {
    let Some(figures) = lines
        .iter()
        .map(|l| l.map(|[a, b]| a.max(b)))
        .collect::<Option<Vec<f64>>>()
    else {
        return vec![Some(true); lines.len()];
    };
    // Each launch's placement, numbered from the nearest.
    let mut order: Vec<usize> = (0..figures.len()).collect();
    order.sort_by(|&a, &b| figures[a].total_cmp(&figures[b]));
    let (mut placement, mut sizes) = (vec![0; figures.len()], Vec::<usize>::new());
    let mut from = f64::NEG_INFINITY;
    for i in order {
        if sizes.is_empty() || figures[i] >= OTHER_CORES * from {
            from = figures[i];
            sizes.push(0);
        }
        placement[i] = sizes.len() - 1;
        *sizes.last_mut().expect("a placement") += 1;
    }
    // The placements by launches, most first, of as many the nearer first.
    let mut ranked: Vec<usize> = (0..sizes.len()).collect();
    ranked.sort_by_key(|&k| std::cmp::Reverse(sizes[k]));
    placement
        .iter()
        .map(|&k| match ranked.iter().position(|&r| r == k) {
            Some(0) => Some(true),
            Some(1) => Some(false),
            _ => None,
        })
        .collect()
}

/// Each launch's placement: the majority's (`Some(true)`) or the second set's (`Some(false)`), as
/// [`same_cores`] finds them among the launches that held one; None for a launch at a third
/// placement, or whose cache line's round trips before and after its sweep differ 2× or more
/// (the ranks moved within it: its sizes were measured partly at each placement), in no set.
pub(super) fn placements(runs: &[Launch]) -> Vec<Option<bool>> {
    let moved = |l: &Option<[f64; 2]>| l.is_some_and(|[a, b]| placements_apart(a, b));
    let held: Vec<Option<[f64; 2]>> = runs.iter().map(|r| r.line).filter(|l| !moved(l)).collect();
    let mut same = same_cores(&held).into_iter();
    runs.iter()
        .map(|r| match moved(&r.line) {
            true => None,
            false => same.next().flatten(),
        })
        .collect()
}

/// Whether two cache-line figures (ns) are of different placements of the cores: 2×
/// ([`OTHER_CORES`]) or more apart.
pub(crate) fn placements_apart(a: f64, b: f64) -> bool {
    a.max(b) >= OTHER_CORES * a.min(b)
}

/// Launches at another placement than the majority's that make a set of their own (the model's
/// §12: a node's placements, each with its `cores` figure); fewer are left out.
pub const MIN_OTHER_LAUNCHES: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::launch::odd_launches;

    /// Launches with their cache line's round trips before and after their sweeps, nothing else.
    fn launches(v: &[[f64; 2]]) -> Vec<Launch> {
        v.iter()
            .map(|&l| Launch {
                line: Some(l),
                ..Launch::default()
            })
            .collect()
    }

    /// The launches kept are those within 2× of the nearest (before and after), or the far
    /// ones where they are more; with no figure, all.
    #[test]
    fn launches_on_other_cores_are_left_out() {
        let some = |v: &[[f64; 2]]| v.iter().map(|&l| Some(l)).collect::<Vec<_>>();
        // A spell on far cores beginning within the second launch.
        let (t, f) = (Some(true), Some(false));
        let one_far = some(&[[60.0, 70.0], [65.0, 338.0], [90.0, 95.0], [58.0, 61.0]]);
        assert_eq!(same_cores(&one_far), [t, f, t, t]);
        // Within 2× of the nearest is near: 119 against 60.
        let spread = some(&[[60.0, 59.0], [119.0, 100.0]]);
        assert_eq!(same_cores(&spread), [t, t]);
        let mostly_far = some(&[[330.0, 340.0], [60.0, 70.0], [335.0, 350.0]]);
        assert_eq!(same_cores(&mostly_far), [t, f, t]);
        let even = some(&[[60.0, 70.0], [330.0, 340.0]]);
        assert_eq!(same_cores(&even), [t, f]);
        assert_eq!(same_cores(&[Some([60.0, 70.0]), None]), [t, t]);
        assert_eq!(same_cores(&[]), Vec::<Option<bool>>::new());
    }

    /// Three placements (as this machine showed one afternoon, a cache line at 58–65, 130–160
    /// and 430–510 ns): the one of most launches is the set's, the next the second set's, and
    /// the third's launches are in none; of two as many, the nearer first. 300 and 500 are one
    /// placement (under 2× apart), 140 and 300 two.
    #[test]
    fn a_third_placement_is_in_no_set() {
        let some = |v: &[f64]| v.iter().map(|&x| Some([x, x])).collect::<Vec<_>>();
        let (t, f) = (Some(true), Some(false));
        let three = some(&[131.0, 480.0, 61.0, 146.0, 503.0, 138.0]);
        assert_eq!(same_cores(&three), [t, f, None, t, f, t]);
        let tied = some(&[480.0, 61.0, 140.0, 65.0, 150.0]);
        assert_eq!(same_cores(&tied), [None, t, f, t, f]);
        let wide = some(&[300.0, 500.0, 140.0]);
        assert_eq!(same_cores(&wide), [t, t, f]);
        // The log names the third placement's launches apart from those that moved.
        let runs = launches(&[
            [131.0, 128.0],
            [140.0, 135.0],
            [480.0, 470.0],
            [490.0, 480.0],
            [61.0, 65.0],
            [146.0, 465.0],
        ]);
        let p = placements(&runs);
        assert_eq!(p, [t, t, f, f, None, None]);
        let said = odd_launches(&runs, &p);
        assert!(
            said.contains("1 launch(es) at a third placement of the cores, in no set (61/65 ns"),
            "{said}"
        );
        assert!(
            said.contains("1 launch(es) whose ranks moved") && said.contains("146/465"),
            "{said}"
        );
    }

    /// A launch whose ranks moved between near and far cores within its sweep (its figures
    /// before and after 2× apart) is in no set; the others are placed as `same_cores` places
    /// them among themselves.
    #[test]
    fn a_launch_that_moved_within_its_sweep_is_in_no_set() {
        // This session's MPICH node calibration: the third far launch began near.
        let runs = launches(&[
            [137.0, 127.0],
            [583.0, 575.0],
            [629.0, 452.0],
            [141.0, 465.0],
            [134.0, 130.0],
            [133.0, 140.0],
        ]);
        let p = placements(&runs);
        assert_eq!(
            p,
            [
                Some(true),
                Some(false),
                Some(false),
                None,
                Some(true),
                Some(true)
            ]
        );
        let said = odd_launches(&runs, &p);
        assert!(
            said.contains("2 launch(es) on cores farther apart"),
            "{said}"
        );
        assert!(said.contains("1 launch(es) whose ranks moved") && said.contains("141/465"));
        // The same launch among far ones is still in no set; where none has figures, all are
        // the majority's.
        let runs = launches(&[[450.0, 460.0], [141.0, 465.0], [440.0, 470.0]]);
        assert_eq!(placements(&runs), [Some(true), None, Some(true)]);
        let none: Vec<Launch> = (0..2)
            .map(|_| Launch {
                apart: true,
                ..Launch::default()
            })
            .collect();
        assert_eq!(placements(&none), [Some(true), Some(true)]);
    }
}
