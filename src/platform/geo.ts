import { z } from 'zod';

const EARTH_RADIUS_KM = 6371.0088;

export const zLatitude = z.number().min(-90).max(90);
export const zLongitude = z.number().min(-180).max(180);

export function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLng = (lng2 - lng1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** A latitude/longitude box that contains every point within `radiusKm` of the centre (index prefilter). */
export function boundingBox(lat: number, lng: number, radiusKm: number) {
  const dLat = radiusKm / 111.32;
  const cos = Math.cos((lat * Math.PI) / 180);
  const dLng = cos < 1e-6 ? 180 : Math.min(180, radiusKm / (111.32 * cos));
  return {
    minLat: Math.max(-90, lat - dLat),
    maxLat: Math.min(90, lat + dLat),
    minLng: Math.max(-180, lng - dLng),
    maxLng: Math.min(180, lng + dLng),
  };
}

/** SQL expression of the haversine distance in km from ($lat, $lng) to the row's latitude/longitude columns. */
export const haversineSql = (latParam: string, lngParam: string, latCol = 'latitude', lngCol = 'longitude') =>
  `(2 * ${EARTH_RADIUS_KM} * asin(least(1, sqrt(power(sin(radians(${latCol} - ${latParam}) / 2), 2) + cos(radians(${latParam})) * cos(radians(${latCol})) * power(sin(radians(${lngCol} - ${lngParam}) / 2), 2)))))`;
