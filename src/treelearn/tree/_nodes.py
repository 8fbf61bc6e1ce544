"""Node codes shared by the Tree and its formats (a module below both)."""
LEAF = -1  #: children_left / children_right of a leaf
UNDEFINED = -2  #: feature / threshold of a leaf
NUMERIC = 0  #: kind of the condition x_feature >= threshold
CATEGORICAL = 1  #: kind of the condition x_feature == category (threshold: the category's code)
