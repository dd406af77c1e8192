
*€x€€Bfloat16_typed