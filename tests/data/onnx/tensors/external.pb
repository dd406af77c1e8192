Bexternalj
locationexternal_data.binj
offset8j
length8p