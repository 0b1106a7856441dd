package core

import "github.com/graphferry/graphferry/engine/pipeline"

// Stats returns the loader's pipeline statistics (see pipeline.Stats): the
// current epoch's and the total. Safe from any goroutine, also while Next
// runs and after Close.
func (l *Loader) Stats() pipeline.Stats { return l.pl.Stats() }
