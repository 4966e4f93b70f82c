package spend

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// defaultsCSV is the shipped price table; its header comment names its source and date.
//
//go:embed defaults.csv
var defaultsCSV string

// DefaultTable returns the shipped price table (estimates, in DefaultCurrency).
func DefaultTable() Table {
	t, err := ParseTable(DefaultCurrency, strings.NewReader(defaultsCSV))
	if err != nil {
		panic("spend: the shipped price table does not parse: " + err.Error()) // a test holds it sound
	}
	return t
}

// ParseTable reads a price table in the shipped file's CSV form (lines starting with # are
// comments; a header row channel,country,prefix,provider,price) and validates it.
func ParseTable(cur string, r io.Reader) (Table, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = 5
	cr.TrimLeadingSpace = true
	rows, err := cr.ReadAll()
	if err != nil {
		return Table{}, fmt.Errorf("spend: price table: %w", err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "channel,country,prefix,provider,price" {
		return Table{}, errors.New("spend: price table: the first row must be channel,country,prefix,provider,price")
	}
	t := Table{Currency: cur}
	for i, row := range rows[1:] {
		amount, err := ParseAmount(row[4])
		if err != nil {
			return Table{}, fmt.Errorf("spend: price table: row %d: price %q: %w", i+2, row[4], err)
		}
		t.Prices = append(t.Prices, Price{Channel: row[0], Country: row[1], Prefix: row[2], Provider: row[3], Amount: amount})
	}
	if f := t.Validate(); len(f) > 0 {
		return Table{}, fmt.Errorf("spend: price table: %v", f)
	}
	return t, nil
}
