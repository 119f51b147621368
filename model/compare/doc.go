// Package compare answers how far the analytical model (model/analytic)
// is from the simulation (model/sim) of the same network: it evaluates the
// network, simulates it at its offered load and once more at a quarter
// above the model's attainable throughput with unbounded queues (the
// capacity run), and gives each metric both ways with the relative error.
//
// It sits above model/analytic and model/sim, which do not import each
// other. The JSON form is documented in json.md.
package compare
