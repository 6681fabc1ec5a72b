//! One progress sequence per call: the walk's counters and an upstream MCP
//! server's own reports go out as a single series the client can draw.
//!
//! The unit is the request to the upstream. A walk report says how many
//! requests were made (`progress`) of the most the bounds allow (`total`,
//! the same unit every time). An upstream's report arrives while a request
//! is in flight, so it is placed between the requests done and the next
//! one: at its own fraction when it gives a total, else halfway to the next
//! request. `progress` always increases (the MCP rule); a report that could
//! not increase it is not sent. `total` is sent only once a walk report has
//! said it, so it never changes unit (an upstream's "3 of 3" is not followed
//! by "4 of 60"): the upstream's own numbers stay in the message.

/// What one notification carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Point {
    pub progress: f64,
    pub total: Option<f64>,
}

/// The series of one call.
#[derive(Debug, Default)]
pub(super) struct Sequence {
    /// Requests the walk reported made.
    done: u32,
    /// The walk's bound on requests, once reported.
    total: Option<f64>,
    /// The last progress sent.
    last: Option<f64>,
}

impl Sequence {
    /// A walk report: `requests` made of at most `requests_max` (0 when
    /// unbounded).
    pub fn walk(&mut self, requests: u32, requests_max: u32) -> Option<Point> {
        self.done = self.done.max(requests);
        if requests_max > 0 {
            self.total = Some(f64::from(requests_max.max(requests)));
        }
        self.place(f64::from(requests))
    }

    /// An upstream's own report for the request in flight.
    pub fn upstream(&mut self, progress: f64, total: Option<f64>) -> Option<Point> {
        let fraction = match total {
            Some(total) if total > 0.0 && progress.is_finite() => {
                (progress / total).clamp(0.0, 0.99)
            }
            _ => 0.0,
        };
        self.place(f64::from(self.done) + fraction)
    }

    /// Sends `wanted`, or, when it would not increase the series, a point
    /// halfway between the last one and the next request.
    fn place(&mut self, wanted: f64) -> Option<Point> {
        let progress = match self.last {
            Some(last) if wanted <= last => {
                let ceiling = (f64::from(self.done) + 1.0).max(last.floor() + 1.0);
                let halfway = last + (ceiling - last) / 2.0;
                // Past f64's precision the halfway point is an end.
                if halfway <= last || halfway >= ceiling {
                    return None;
                }
                halfway
            }
            _ => wanted,
        };
        if !progress.is_finite() {
            return None;
        }
        self.last = Some(progress);
        let total = self.total.map(|t| t.max(progress));
        Some(Point { progress, total })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strictly_increasing(points: &[Point]) -> bool {
        points.windows(2).all(|w| w[0].progress < w[1].progress)
    }

    #[test]
    fn an_upstream_count_then_a_walk_stays_in_one_unit() {
        // The upstream reports 1/3, 2/3, 3/3 during the first request, then
        // the walk reports the request made of at most 20.
        let mut s = Sequence::default();
        let mut sent: Vec<Point> = [1.0, 2.0, 3.0]
            .into_iter()
            .filter_map(|p| s.upstream(p, Some(3.0)))
            .collect();
        sent.extend(s.walk(1, 20));
        assert_eq!(sent.len(), 4);
        assert!(strictly_increasing(&sent), "{sent:?}");
        assert!(sent[..3]
            .iter()
            .all(|p| p.total.is_none() && p.progress < 1.0));
        assert_eq!(
            sent[3],
            Point {
                progress: 1.0,
                total: Some(20.0)
            }
        );
    }

    #[test]
    fn upstream_reports_between_walk_reports_fall_between_them() {
        let mut s = Sequence::default();
        let mut sent = vec![s.walk(1, 20).unwrap()];
        // A late report of the first page, then reports without a total.
        for _ in 0..3 {
            sent.extend(s.upstream(1.0, None));
        }
        sent.extend(s.walk(2, 20));
        sent.extend(s.upstream(5.0, Some(10.0)));
        sent.extend(s.walk(3, 20));
        assert_eq!(sent.len(), 7, "{sent:?}");
        assert!(strictly_increasing(&sent), "{sent:?}");
        assert!(sent.iter().all(|p| p.total == Some(20.0)), "{sent:?}");
        assert!(sent[1..4]
            .iter()
            .all(|p| p.progress > 1.0 && p.progress < 2.0));
        assert_eq!(sent[5].progress, 2.5);
    }

    #[test]
    fn a_report_that_cannot_increase_the_series_is_not_sent() {
        let mut s = Sequence::default();
        let first = s.walk(3, 0).unwrap();
        assert_eq!(
            first,
            Point {
                progress: 3.0,
                total: None
            }
        );
        // The walk repeats its count: the series still rises, below 4.
        let again = s.walk(3, 0).unwrap();
        assert!(again.progress > 3.0 && again.progress < 4.0);
        // Thousands of reports within one request never go backwards or
        // reach the next request; the ones past f64's precision are dropped.
        let mut last = again.progress;
        for _ in 0..2000 {
            if let Some(p) = s.upstream(f64::NAN, None) {
                assert!(p.progress > last && p.progress < 4.0);
                last = p.progress;
            }
        }
        assert_eq!(s.walk(4, 0).unwrap().progress, 4.0);
    }

    #[test]
    fn a_bound_smaller_than_the_requests_made_grows_to_them() {
        let mut s = Sequence::default();
        assert_eq!(s.walk(7, 5).unwrap().total, Some(7.0));
    }
}
