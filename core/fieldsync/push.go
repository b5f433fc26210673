package fieldsync

import "github.com/strata-archaeo/strata/core/api"

func (h *handlers) pushRoutes() []api.Route { return nil }
