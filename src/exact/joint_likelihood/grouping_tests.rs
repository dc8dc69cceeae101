//! Identical rows are integrated once and weighted by their multiplicity: the grouped sums
//! must be the per-problem sums (to the last bits a different summation order leaves).

use super::runs::runs_log_likelihood;
use super::{totals, Count, JointData, JointParams, Order};

fn c(correct: usize, samples: usize) -> Option<Count> {
    Some(Count::new(correct, samples))
}

/// |a - b| within 1e-12 of |b|, or of 1e-12 of the largest entry (an entry summed from terms
/// of both signs keeps only the absolute accuracy of its terms).
fn assert_close(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let scale = b.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let bound = 1e-12 * y.abs().max(scale * 1e-3);
        assert!(
            (x - y).abs() <= bound,
            "{what}[{i}]: grouped {x}, per problem {y} (bound {bound:e})"
        );
    }
}

fn pooled_rows() -> Vec<Vec<Option<Count>>> {
    let base = [
        vec![c(3, 5), c(1, 4), None],
        vec![c(0, 2), None, c(2, 2)],
        vec![c(7, 8), c(8, 8), c(0, 3)],
        vec![None, c(1, 1), c(0, 1)],
        vec![c(40, 64), c(12, 64), c(64, 64)],
        vec![c(0, 8), c(0, 8), c(0, 8)],
        vec![c(8, 8), c(8, 8), c(8, 8)],
    ];
    // every row several times, interleaved: 7 distinct rows among 7 * 13 problems
    (0..13)
        .flat_map(|r| base.iter().cycle().skip(r % 7).take(7).cloned())
        .collect()
}

#[test]
fn grouped_rows_give_the_per_problem_likelihood_gradient_and_hessian() {
    let rows = pooled_rows();
    let data = JointData::new(3, rows.clone()).unwrap();
    assert_eq!(
        data.run_index.multiplicities().count(),
        7,
        "identical rows grouped"
    );
    let ungrouped = data.run_index.ungrouped();
    for params in [
        JointParams {
            mu: 0.4,
            sigma: 1.3,
            shift: vec![0.0, -0.5, 0.9],
            tau: vec![0.7, 0.0, 1.6],
            omega: Vec::new(),
        },
        JointParams {
            mu: -1.0,
            sigma: 12.0,
            shift: vec![0.0, 2.0, -3.0],
            tau: vec![4.0, 2.5, 0.3],
            omega: Vec::new(),
        },
    ] {
        let (value, gradient, hessian) = totals(&data, &params, Order::Hessian);
        let terms = runs_log_likelihood(&ungrouped, &params, data.layout(), Order::Hessian);
        let p = gradient.len();
        let (mut v, mut g, mut h) = (0.0, vec![0.0; p], vec![0.0; p * p]);
        for (tv, tg, th) in &terms {
            v += tv;
            g.iter_mut().zip(tg).for_each(|(a, b)| *a += b);
            h.iter_mut().zip(th).for_each(|(a, b)| *a += b);
        }
        assert_close("ln L", &[value], &[v]);
        assert_close("gradient", &gradient, &g);
        assert_close("Hessian", &hessian, &h);
    }
}

#[test]
fn repeated_problems_with_runs_multiply_the_likelihood_gradient_and_hessian() {
    let runs =
        |list: &[(usize, usize)]| Some(list.iter().map(|&(c, n)| Count::new(c, n)).collect());
    let base: Vec<Vec<Option<Vec<Count>>>> = vec![
        vec![
            runs(&[(2, 6), (4, 6), (3, 6)]),
            runs(&[(1, 6), (0, 6), (2, 6)]),
        ],
        vec![
            runs(&[(6, 6), (6, 6), (5, 6)]),
            runs(&[(6, 6), (6, 6), (6, 6)]),
        ],
        vec![runs(&[(0, 6), (0, 6), (0, 6)]), None],
        vec![runs(&[(3, 4), (9, 9)]), runs(&[(4, 6), (2, 6), (4, 6)])],
        vec![
            runs(&[(4, 6), (2, 6), (3, 6)]),
            runs(&[(1, 6), (0, 6), (2, 6)]),
        ],
    ];
    // the same problems three times over, in another order each time
    let repeated: Vec<_> = (0..3)
        .flat_map(|r| base.iter().cycle().skip(2 * r).take(base.len()).cloned())
        .collect();
    let once = JointData::with_runs(2, base).unwrap();
    let thrice = JointData::with_runs(2, repeated).unwrap();
    let params = JointParams {
        mu: 0.2,
        sigma: 1.2,
        shift: vec![0.0, -0.6],
        tau: vec![0.4, 0.3],
        omega: vec![0.7, 0.5],
    };
    let (v1, g1, h1) = totals(&once, &params, Order::Hessian);
    let (v3, g3, h3) = totals(&thrice, &params, Order::Hessian);
    let times3 = |x: &[f64]| x.iter().map(|v| 3.0 * v).collect::<Vec<_>>();
    assert_close("ln L", &[v3], &[3.0 * v1]);
    assert_close("gradient", &g3, &times3(&g1));
    assert_close("Hessian", &h3, &times3(&h1));
}
