package catalog

// Merge returns c followed by d: applied as one Changes, d's changes come
// after c's of the same kind.
func (c Changes) Merge(d Changes) Changes {
	if d.Empty() {
		return c
	}
	return Changes{
		Databases:      append(c.Databases, d.Databases...),
		Tables:         append(c.Tables, d.Tables...),
		Partitions:     append(c.Partitions, d.Partitions...),
		DropPartitions: append(c.DropPartitions, d.DropPartitions...),
	}
}
