/** The most frequent English words: filler for generated documents (fts5-snippet tests). */
export const COMMON = (
  'the a to of and in is it you that was for on are with as be at this have from or one had by word but not what all were ' +
  'we when your can said there use an each which she do how their if will up other about out many then them these so some her ' +
  'would make like him into time has look two more write go see number no way could people my than first water been call who'
).split(' ');
