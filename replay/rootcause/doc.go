// Package rootcause ranks the features of packets — the conditions they
// met (named booleans) and the performance-critical variables they saw
// (named numbers) — by how well they explain the slow packets of a trace,
// after PIX's root-cause diagnosis (rank PCVs by how their distribution
// follows the latency's), extended to conditions.
//
// The score of every feature, boolean or number, is the same statistic:
// Pearson's correlation between the feature's value (0/1 for a boolean)
// and whether the packet is slow (0/1). For a boolean it is the phi
// coefficient; for a number the point-biserial correlation. It lies in
// [-1, 1]; 1 means the feature is present (or high) exactly in the slow
// packets. Rows come sorted by score, highest first, ties by name. Each row
// also carries descriptive figures (shares, lift, means, correlation with
// the cost itself and the least-squares cost per unit) and a one-line
// explanation.
//
// Complexity: O(n·f) for n samples and f features, one pass per feature.
package rootcause
