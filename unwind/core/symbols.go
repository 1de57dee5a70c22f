package core

import (
	"debug/elf"
	"fmt"
	"os"

	"kpatch/unwind/symtab"
)

// Symbols builds the symbol table of the dumped process: the executable
// exe (if not empty) at the bias AT_ENTRY implies, every ELF file NT_FILE
// maps that can be opened (under Root), at the bias its mapping implies,
// and the vDSO from the core's memory. Objects that cannot be read are
// reported in errs; the table holds the others.
func (c *File) Symbols(exe string) (tab *symtab.Table, errs []error) {
	tab = &symtab.Table{}
	tab.AddMappings(c.Mappings)
	var exeInfo os.FileInfo
	if exe != "" {
		if err := c.addExe(tab, exe); err != nil {
			errs = append(errs, err)
		} else {
			exeInfo, _ = os.Stat(exe)
		}
	}
	errs = append(errs, tab.AddMapped(c.Mappings, c.Root, exeInfo)...)
	if vf, base, err := c.VDSO(); err == nil {
		if bias, ok := symtab.Bias(vf, base, 0); ok {
			if err := tab.AddELF("[vdso]", vf, bias); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return tab, errs
}

func (c *File) addExe(tab *symtab.Table, exe string) error {
	f, err := elf.Open(exe)
	if err != nil {
		return fmt.Errorf("executable: %w", err)
	}
	defer f.Close()
	var bias uint64
	if entry, ok := c.Aux(AtEntry); ok {
		bias = entry - f.Entry
	} else if f.Type == elf.ET_DYN {
		return fmt.Errorf("executable %s is position-independent and the core has no AT_ENTRY to place it", exe)
	}
	if f.Type == elf.ET_EXEC && bias != 0 {
		return fmt.Errorf("executable %s does not match the core: entry %#x, AT_ENTRY says %#x", exe, f.Entry, f.Entry+bias)
	}
	return tab.AddELF(exe, f, bias)
}
