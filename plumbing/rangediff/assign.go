package rangediff

import (
	"context"
	"math"
)

// costFunc returns the cost of assigning column col to row row.
type costFunc func(col, row int) int

// checkEvery is how many rows the assignment handles between two looks
// at its context.
const checkEvery = 64

// assign solves the square linear assignment problem of size n with the
// algorithm of Jonker and Volgenant (1987), step for step as git's
// compute_assignment (linear-assignment.c) does, so that ties between
// equally cheap assignments are broken as git breaks them. The cost
// matrix is not stored: cost is asked for each entry when needed, which
// keeps the memory linear in n. It returns the row of every column (git's
// column2row); columns are the old series' patches and rows the new
// series', as in git's range-diff.
func assign(ctx context.Context, n int, cost costFunc) ([]int, error) {
	col2row := make([]int, n)
	row2col := make([]int, n)
	if n < 2 {
		return col2row, nil
	}
	for i := range col2row {
		col2row[i], row2col[i] = -1, -1
	}
	v := make([]int, n)

	// Column reduction, from the last column to the first: each column
	// takes its cheapest row (the first of equals) if no later column has
	// taken it.
	for j := n - 1; j >= 0; j-- {
		if j%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		best, bestCost := 0, cost(j, 0)
		for i := 1; i < n; i++ {
			if c := cost(j, i); bestCost > c {
				best, bestCost = i, c
			}
		}
		v[j] = bestCost
		switch {
		case row2col[best] == -1:
			row2col[best], col2row[j] = j, best
		default:
			if row2col[best] >= 0 {
				row2col[best] = -2 - row2col[best]
			}
			col2row[j] = -1
		}
	}

	// Reduction transfer.
	free := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		j1 := row2col[i]
		switch {
		case j1 == -1:
			free = append(free, i)
		case j1 < -1:
			row2col[i] = -2 - j1
		default:
			other := 0
			if j1 == 0 {
				other = 1
			}
			least := cost(other, i) - v[other]
			for j := 1; j < n; j++ {
				if c := cost(j, i) - v[j]; j != j1 && least > c {
					least = c
				}
			}
			v[j1] -= least
		}
	}
	if len(free) == 0 {
		return col2row, nil
	}

	// Augmenting row reduction, twice.
	for phase := 0; phase < 2; phase++ {
		pending := free
		free = make([]int, 0, len(pending))
		for k := 0; k < len(pending); {
			if k%checkEvery == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			i := pending[k]
			k++
			j1, j2 := 0, -1
			u1, u2 := cost(0, i)-v[0], math.MaxInt
			for j := 1; j < n; j++ {
				c := cost(j, i) - v[j]
				if u2 > c {
					if u1 < c {
						u2, j2 = c, j
					} else {
						u2, u1, j2, j1 = u1, c, j1, j
					}
				}
			}
			if j2 < 0 {
				j2, u2 = j1, u1
			}
			i0 := col2row[j1]
			if u1 < u2 {
				v[j1] -= u2 - u1
			} else if i0 >= 0 {
				j1 = j2
				i0 = col2row[j1]
			}
			if i0 >= 0 {
				if u1 < u2 {
					// The bumped row is handled next, in the
					// slot just freed.
					k--
					pending[k] = i0
				} else {
					free = append(free, i0)
				}
			}
			row2col[i], col2row[j1] = j1, i
		}
	}

	// Augmentation: a shortest augmenting path from every free row.
	d := make([]int, n)
	pred := make([]int, n)
	cols := make([]int, n)
	for f, i1 := range free {
		if f%4 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for j := 0; j < n; j++ {
			d[j] = cost(j, i1) - v[j]
			pred[j] = i1
			cols[j] = j
		}
		low, up, last := 0, 0, 0
		j := -1
		var least int
	search:
		for {
			last = low
			least = d[cols[up]]
			up++
			for k := up; k < n; k++ {
				j = cols[k]
				if c := d[j]; c <= least {
					if c < least {
						up = low
						least = c
					}
					cols[k] = cols[up]
					cols[up] = j
					up++
				}
			}
			// As in git, the path then ends at the column last looked
			// at above (j), not necessarily at the free one found.
			for k := low; k < up; k++ {
				if col2row[cols[k]] == -1 {
					break search
				}
			}
			// Scan rows until the set of columns at the current
			// minimum distance is used up.
			for scanned := 1; ; scanned++ {
				if scanned%checkEvery == 0 && ctx.Err() != nil {
					return nil, ctx.Err()
				}
				j1 := cols[low]
				low++
				i := col2row[j1]
				u1 := cost(j1, i) - v[j1] - least
				for k := up; k < n; k++ {
					j = cols[k]
					c := cost(j, i) - v[j] - u1
					if c < d[j] {
						d[j] = c
						pred[j] = i
						if c == least {
							if col2row[j] == -1 {
								break search
							}
							cols[k] = cols[up]
							cols[up] = j
							up++
						}
					}
				}
				if low == up {
					break
				}
			}
		}
		for k := 0; k < last; k++ {
			j1 := cols[k]
			v[j1] += d[j1] - least
		}
		for {
			i := pred[j]
			col2row[j] = i
			j, row2col[i] = row2col[i], j
			if i == i1 {
				break
			}
		}
	}
	return col2row, nil
}
