package modelsim

// Visible is u as a reader of the API's usage fields can know it: the
// OpenAI and Gemini APIs have no count of cache writes, so those count as
// input there, and Anthropic's has no count of reasoning.
func (u Usage) Visible(api string) Usage {
	switch api {
	case APIAnthropic:
		u.Reasoning = 0
	case APIResponses, APIChat, APIGemini:
		u.Input += u.CacheCreation
		u.CacheCreation = 0
	}
	return u
}

// anthropicUsage is the Messages API's usage object: input_tokens excludes
// the cache.
func anthropicUsage(u Usage, output int64) map[string]any {
	return map[string]any{
		"input_tokens":                u.Input,
		"cache_creation_input_tokens": u.CacheCreation,
		"cache_read_input_tokens":     u.CacheRead,
		"output_tokens":               output,
	}
}

// responsesUsage is the Responses API's usage object: input_tokens includes
// cached tokens, output_tokens includes reasoning.
func responsesUsage(u Usage) map[string]any {
	in := u.Input + u.CacheCreation + u.CacheRead
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens":          in + u.Output,
	}
}

// chatUsage is Chat Completions' usage object: prompt_tokens includes cached
// tokens, completion_tokens includes reasoning.
func chatUsage(u Usage) map[string]any {
	in := u.Input + u.CacheCreation + u.CacheRead
	return map[string]any{
		"prompt_tokens":             in,
		"completion_tokens":         u.Output,
		"total_tokens":              in + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
}

// geminiUsage is Gemini's usageMetadata: promptTokenCount includes cached
// content, candidatesTokenCount excludes thoughts.
func geminiUsage(u Usage) map[string]any {
	in := u.Input + u.CacheCreation + u.CacheRead
	m := map[string]any{
		"promptTokenCount":     in,
		"candidatesTokenCount": u.Output - u.Reasoning,
		"totalTokenCount":      in + u.Output,
		"promptTokensDetails":  []any{map[string]any{"modality": "TEXT", "tokenCount": in}},
	}
	if u.CacheRead > 0 {
		m["cachedContentTokenCount"] = u.CacheRead
	}
	if u.Reasoning > 0 {
		m["thoughtsTokenCount"] = u.Reasoning
	}
	return m
}
