package buildtest

// inherit carries every problem of an object into the following patches
// that do not compile that object again: the tree after those patches
// still has it (they show FAIL or WARN "since" the patch that brought it).
// A patch that linked vmlinux checked vmlinux.o again.
func inherit(cells []Cell) {
	for k := 1; k < len(cells); k++ {
		if cells[k].Status == NotBuilt || cells[k-1].Status == NotBuilt {
			continue
		}
		compiled := map[string]bool{}
		for _, o := range cells[k].Objects {
			compiled[o] = true
		}
		if cells[k].Linked {
			compiled[LinkObject] = true
		}
		have := map[string]bool{}
		for _, list := range [][]Problem{cells[k].Errors, cells[k].Warnings} {
			for _, p := range list {
				have[p.Key()] = true
			}
		}
		for _, p := range cells[k-1].Errors {
			if p.Object != "" && !compiled[p.Object] && !have[p.Key()] {
				cells[k].Errors = append(cells[k].Errors, p)
				have[p.Key()] = true
			}
		}
		for _, p := range cells[k-1].Warnings {
			if p.Object != "" && !compiled[p.Object] && !have[p.Key()] {
				cells[k].Warnings = append(cells[k].Warnings, p)
				have[p.Key()] = true
			}
		}
		switch {
		case cells[k].Status == Skip:
		case len(cells[k].Errors) > 0:
			cells[k].Status = Fail
		case len(cells[k].Warnings) > 0:
			cells[k].Status = Warn
		}
	}
}

// markSince sets each problem's Since: the first patch of the run of
// consecutive cells that have it.
func markSince(cells []Cell) {
	for i := range cells {
		for _, list := range [][]Problem{cells[i].Errors, cells[i].Warnings} {
			for j := range list {
				since := i + 1
				if i > 0 {
					for _, prev := range [][]Problem{cells[i-1].Errors, cells[i-1].Warnings} {
						for _, p := range prev {
							if p.Key() == list[j].Key() {
								since = p.Since
							}
						}
					}
				}
				list[j].Since = since
			}
		}
	}
}
