package harness

// Table is a table of results as text cells. The report writes it in
// Markdown and HTML and as a CSV file, whose name it records in File.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	File    string // the CSV file's name, set when the report is written
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }
