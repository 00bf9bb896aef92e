package layout

// ReadDocument returns the text of the document of id as it sits in the folder: the
// source a person or an earlier write left there. ok is false when the folder holds no
// document of id.
func ReadDocument(ix *Index, read ReadFile, id Identity) (doc []byte, ok bool, err error) {
	loc, found := ix.Lookup(id)
	if !found {
		return nil, false, nil
	}
	pf, d, err := locate(read, loc, id)
	if err != nil {
		return nil, false, err
	}
	return []byte(pf.text.segs[d.seg].body), true, nil
}
